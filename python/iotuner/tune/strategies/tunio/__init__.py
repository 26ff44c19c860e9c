"""TunIO's search (paper 002): its genetic algorithm, each generation varying
only the subset of dimensions the impact-first picker chooses (`impact`),
the others pinned at the best configuration so far; stopped by TunIO's
learned stopper unless the study chooses another (--stop).

- tunio: the learned picker (state observer + subset picker, pretrained,
  learning online within the study).
- tunio-fanova: the non-learned ablation, the dimensions Optuna's fANOVA finds
  most important so far.

A generation is `population` consecutive search trials; its first is the
elite (the incumbent, re-proposed at no cost), the others are children bred
inside the subset. Every decision is derived from the study's records made
before the generation began, with seeds of the study, so a resumed study (or
another worker) makes the same decisions; the online learning is replayed
from the records the same way.

The package holds all of TunIO: `impact` (the picker), `stopper` (the learned
early stopper, registered as `learned`), `pretrain` (how both policies were
trained, `bench/tunio_pretrain.py`), `policy_file` and `data/` (the policies).
"""

from __future__ import annotations

import json
import math
import random
import statistics
from collections.abc import Mapping
from typing import Any

from ....settings import as_text
from ...protocol import Strategy
from ...space import library_default
from ...study.records import BASELINE, TRIAL, canonical
from .. import register
from . import impact, stopper  # noqa: F401  (stopper registers the early stopper "learned")


class _ImpactFirst(Strategy):
    population = 8
    default_stop = "learned"

    def __init__(self, space, seed, options):
        super().__init__(space, seed, options)
        self.population = int(self.options.get("population", self.population))
        if self.population < 3:
            raise ValueError("the population needs at least 3 members")
        self.dims = [impact.Dim(d.name, tuple(d.labels), frozenset(d.knobs())) for d in space.dimensions]
        self._rows: dict[str, tuple[int, ...] | None] = {}
        self.picker = None
        self.plans: list[dict] = []  # per generation: the decision, the incumbent, the parents
        self._store = None

    def make_picker(self, seed: int):
        raise NotImplementedError

    def iteration_trials(self) -> int:
        return self.population

    # ---- points and records ----

    def row_of(self, flat: Mapping[str, Any], key: str | None = None) -> tuple[int, ...] | None:
        """A point's value index per dimension, from its flat settings (None: not a point of the space)."""
        key = key or canonical(flat)
        if key not in self._rows:
            self._rows[key] = self.space.indices_of(flat)
        return self._rows[key]

    def labels(self, row) -> dict[str, str]:
        return {d.name: d.labels[i] for d, i in zip(self.space.dimensions, row)}

    def default_row(self, reference: Mapping[str, str] | None) -> tuple[int, ...]:
        """The dimensions' values before anything is known: what the default run read back, else the
        catalogue's default, else the first value."""
        row = []
        for d in self.space.dimensions:
            pick = 0
            for i, v in enumerate(d.values):
                s = d.settings_of(v)
                if reference and all(str(reference.get(k)) == _text(x) for k, x in s.items()):
                    pick = i
                    break
                if all(
                    library_default(k) is not None and d.label(library_default(k)) == d.label(x) for k, x in s.items()
                ):
                    pick = i
            row.append(pick)
        return tuple(row)

    def score(self, ctx, value: float) -> float:
        """log of the objective, higher is better."""
        v = math.log(max(abs(value), 1e-12))
        return v if ctx.objective.direction == "maximize" else -v

    def snapshot(self, ctx, generation: int):
        """What was known when a generation began (`Trials.known_at`): (seen, incumbent row, incumbent score, the
        previous generation's points with their scores, every measured row)."""
        first = generation * self.population
        known = ctx.store.trials.known_at(first, BASELINE, TRIAL)
        rows, scores, took, measured, by_index = [], [], [], set(), {}
        for r in known.records(TRIAL):
            if not r.settings:
                continue
            row = self.row_of(r.settings, r.key)
            if row is None:
                continue
            measured.add(row)
            if r.state != "COMPLETE" or not r.runs:
                continue
            s = self.score(ctx, statistics.median(r.runs))
            rows.append(row)
            scores.append(s)
            took.append(frozenset(json.loads(r.signature)) if r.signature is not None else None)
            by_index[r.number] = (row, s)
        default = self.score(ctx, known.default_value()) if known.default_runs else 0.0
        seen = impact.Seen(rows, scores, took, default)
        best = known.best()
        inc_row = self.row_of(best.settings) if best is not None else None
        if inc_row is not None:
            inc_score = max(self.score(ctx, best.median), default)
        else:
            inc_row, inc_score = self.default_row(ctx.store.results.reference), default
        prev = [by_index[i] for i in range(first - self.population, first) if i in by_index]
        return seen, inc_row, inc_score, prev, measured

    # ---- generations ----

    def _plan(self, ctx, generation: int) -> dict:
        if self.picker is None:
            self.picker = self.make_picker(ctx.seed)
        while len(self.plans) <= generation:
            g = len(self.plans)
            seen, inc_row, inc_score, prev, measured = self.snapshot(ctx, g)
            if g > 0:  # what the previous generation brought
                last = self.plans[-1]
                gain = inc_score - last["score"]
                changed = [j for j in last["decision"].subset if inc_row[j] != last["incumbent"][j]]
                scale = inc_score - seen.default
                self.picker.observe(last["decision"], changed if gain > 0 else [], gain, inc_score, scale)
            incumbents = [p["score"] for p in self.plans] + [inc_score]
            decision = self.picker.decide(g, seen, inc_row, incumbents)
            self.plans.append(
                {
                    "decision": decision,
                    "incumbent": inc_row,
                    "score": inc_score,
                    "parents": prev + ([(inc_row, inc_score)] if g > 0 else []),
                }
            )
        return self.plans[generation]

    def _measured(self, store) -> set:
        """Every point measured (or failed) so far, as rows."""
        keys = list(store.results.requested) + list(store.results.failed)
        return {
            row
            for row in (self._rows[k] if k in self._rows else self.row_of(json.loads(k), k) for k in keys)
            if row is not None
        }

    def _widen(self, plan: dict, measured: set) -> list[int]:
        return impact.widen(
            plan["decision"], lambda subset: impact.subspace_exhausted(self.dims, subset, plan["incumbent"], measured)
        )

    def propose(self, ctx):
        self._store = ctx.store
        index = len(ctx.store.trials.search_trials())
        generation, slot = divmod(index, self.population)
        plan = self._plan(ctx, generation)
        if slot == 0 and generation > 0:
            return self.labels(plan["incumbent"])  # elitism: the best so far, again (no run)
        measured = self._measured(ctx.store)
        subset = self._widen(plan, measured)
        rng = random.Random(f"{ctx.seed}:tunio:{index}")
        child = impact.breed(self.dims, subset, plan["incumbent"], plan["parents"], measured, rng)
        return self.labels(child)

    # ---- what the exhaustion rule sees ----

    def _current(self) -> dict | None:
        return self.plans[-1] if self.plans else None

    def searched_size(self) -> int | None:
        plan = self._current()
        if plan is None:
            return None
        subset = self._widen(plan, self._measured(self._store) if self._store is not None else set())
        if len(subset) == len(self.dims):
            return None
        return math.prod(len(self.dims[j].labels) for j in subset)

    def searches(self, flat: Mapping[str, Any]) -> bool:
        plan = self._current()
        row = self.row_of(flat)
        if plan is None or row is None:
            return plan is None
        subset = set(plan["decision"].subset)
        return all(row[j] == plan["incumbent"][j] for j in range(len(self.dims)) if j not in subset)

    def subsets(self) -> list[list[str]]:
        """The dimensions each generation varied (for reports and tests)."""
        return [[self.dims[j].name for j in p["decision"].subset] for p in self.plans]


def _text(value) -> str:

    return as_text(value)


@register(
    "tunio",
    "TunIO: its GA varying only the parameters a learned picker expects to matter most, the rest "
    "pinned at the best so far; stopped by TunIO's learned stopper",
)
class Tunio(_ImpactFirst):
    def __init__(self, space, seed, options):
        super().__init__(space, seed, options)
        self.policy = impact.load_policy()  # a missing or damaged policy file is named now, not mid-study

    def make_picker(self, seed: int):
        return impact.Picker(self.dims, self.policy, seed)


@register(
    "tunio-fanova",
    "TunIO's GA on the parameters Optuna's fANOVA ranks most important so far (the non-learned ablation of tunio)",
)
class TunioFanova(_ImpactFirst):
    def make_picker(self, seed: int):
        return impact.FanovaPicker(self.dims, seed)
