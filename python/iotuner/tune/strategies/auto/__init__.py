"""What is known before a run first, then a Bayesian search for the rest, so that few application runs reach
a good point.

1. The recommendation engine's first proposals (`iotuner.recommend`, as `advise` gives them on the default's
   run report): the hybrid model's prediction of the study's objective for the MPI-IO hints and HDF5's
   transfer mode of every point (`prior.py`, from this machine's calibration; no training runs) reconciled
   with SmartIO's rules and the checks on the same report; its best `prior=K` (default 1) points run first,
   every other dimension as the default has it. Without a model the rules' settings still run first.
2. Warm start (`warm.py`): the best points earlier studies in the same storage measured (`warm=K`, default 2),
   when they searched the same space for the same objective on a run like this one.
3. One change at a time (`explore=K`, default 4 runs), after a prior: each other value of each dimension the
   model does not cover (HDF5's chunking, alignment, sieve buffer), in the space's order, from the best point
   measured so far, so a knob the model cannot judge is tried beside the prior's hints rather than drawn.
4. With a prior, the model learns from every run (`learn.py`): each run's phase times correct the model where
   it was wrong (a Gaussian process of the residuals over the settings), and the next point is the best by
   the corrected model with its remaining uncertainty (an upper confidence bound, `weight` deviations), so an
   effect the analytical part does not know is found by measurement. It chooses among the one-change steps
   from the best point measured so far while any is left (`near=0`: among every point): first the steps to a
   value the checks or rules recommend (where the model disagrees with them, the runs decide), last those
   away from one. Points the model knows to behave alike (`canonical.py`: cb_buffer_size with collective
   buffering off both ways) are one point of the search. learn=0 turns it off: then step 5.
5. Search: Optuna's multivariate TPE over the whole space, after as many random start-up draws as bayes makes
   (the runs above are added to its start-up count, not put in place of draws). Without a prior, auto
   searches so right after the warm start.

Options (--strategy-option): prior=K, warm=K, learn=0|1 (default 1), weight=W (default 0.5), near=0|1 (default
1), explore=K (0: none), calibration=FILE (default: this machine's), startup_trials=N (TPE's random start-up
draws after the runs above; default as bayes).
"""

from __future__ import annotations

import itertools
import random

from .... import settings
from ....lazy import lazy
from ....recommend import reconcile
from ....recommend.predictions import Model
from ...protocol import SAMPLER, Strategy
from ...space import library_default
from .. import bayes, register
from . import canonical, learn, prior, warm

optuna = lazy("optuna")
EXPLORE = "auto: one change,"
LEARNT = "auto: the corrected model,"
ENUMERATE = 20000  # a space up to this many points is searched whole; a larger one, a sample and neighbours
SAMPLE = 2000


@register(
    "auto",
    "the hybrid model's best prediction and earlier studies' best points first, then one change at a "
    "time of what the model does not cover, then multivariate TPE",
)
class Auto(Strategy):
    def __init__(self, space, seed, options):
        super().__init__(space, seed, options)
        self.n_prior = self.int_option("prior", 1)
        self.n_warm = self.int_option("warm", 2)
        self.n_explore = self.int_option("explore", 4)
        self.uncovered: list[str] = []  # the dimensions to change one at a time (after a prior only)
        self.explained: dict[tuple, str] = {}
        self._labels: dict[int, dict | None] = {}  # a finished search trial's point, by record id
        self.startup = self.int_option("startup_trials", bayes.startup_trials(space))
        self.first: list[tuple[dict[str, str], str]] | None = None  # the points known before the search, and why
        self.ran: list[dict[str, str]] = []  # those of them measured
        self._tpe = None  # the search's sampler, once made
        self.learns = self.int_option("learn", 1) > 0
        try:
            self.weight = float(self.options.get("weight", 0.5))
        except (TypeError, ValueError):
            raise ValueError(f"strategy auto: weight={self.options.get('weight')!r} is not a number") from None
        self.advised: set[tuple[str, str]] = set()  # (dimension, value) the checks and rules recommend
        self.near = self.int_option("near", 1) > 0
        self.learner: learn.Learner | None = None  # with a prior: the model corrected by every run
        self._heard: list[tuple[dict[str, str] | None, dict | None, float | None]] = []  # runs before it
        self._points: list[dict[str, str]] | None = None  # the search's canonical points (a small space)

    def sampler(self, ctx):
        from .startup import LateTPE

        self._tpe = LateTPE(self.seed, self._startup_trials)
        return self._tpe

    def _startup_trials(self) -> int:
        """TPE counts every finished trial among its start-up ones, the prior's and the changes' too; they are
        added, so its random draws stay as many as bayes's: when the prior points to the wrong corner (a knob
        it cannot see acts jointly with the ones it can), the draws still cover the space. Once the runs before
        the search are known (TPE is made when it first samples, after them), exactly those: without a prior
        (no report, no calibration) auto draws as bayes does, seed for seed."""
        if self.first is None:
            return self.startup + self.n_prior + self.n_explore
        changes = sum(len(self.space.dimension(n).labels) - 1 for n in self.uncovered)
        return self.startup + len(self.first) + min(self.n_explore, changes)

    # ---- what is known before the search ----

    def _first(self, ctx) -> list[tuple[dict[str, str], str]]:
        if self.first is None:
            self.first = self._known(ctx)
        return self.first

    def _known(self, ctx) -> list[tuple[dict[str, str], str]]:

        out: list[tuple[dict[str, str], str]] = []
        default = self.default_point(ctx)
        if self.n_prior:
            model, what = prior.model_prior(
                self.space,
                ctx.objective,
                ctx.store.trials.baseline_report(),
                ctx.store.config,
                self.options.get("calibration"),
            )
            ctx.note(f"auto: prior: {what}" if model else f"auto: no prior: {what}")
            # the first proposals are the recommendation engine's: the model's best points reconciled with
            # SmartIO's rules and the checks on the same report (as advise gives them), so a rule still
            # proposes where the model cannot predict
            known = (
                Model(model.predictor, "evaluated", what, model.nodes) if model else Model(None, "not evaluated", what)
            )
            points, said, advised = reconcile.first_points(
                ctx.store.trials.baseline_report(), self.space, default, self.n_prior, known
            )
            # what the checks and rules set, where the model may disagree: the first one-change steps to test
            self.advised = {(n, v) for p in advised for n, v in p.items() if v != default[n]}
            if points and not model:
                ctx.note(f"auto: first proposals: {said}")
            out += [(point, f"auto: {why}") for point, why in points]
            if model:
                self.uncovered = [d.name for d in self.space.dimensions if d.name not in model.covered]
                if self.learns:
                    flat = settings.flatten(ctx.store.config.baseline) if ctx.store.config.baseline else {}
                    self.learner = learn.Learner(
                        self.space, model.predictor, ctx.objective, ctx.store.config.nodes, flat, self.weight
                    )
                    for labels, times, value in self._heard:
                        self.learner.observe(labels or default, times, value)
        if self.n_warm:
            earlier = warm.earlier(ctx.store, self.space, ctx.objective)
            best = warm.best(earlier, self.n_warm)
            if best:
                ctx.note(
                    f"auto: warm start from {sum(len(w.points) for w in earlier)} point(s) of "
                    f"{len(earlier)} earlier study(ies) of a run like this one: "
                    f"{', '.join(w.study for w in earlier)}"
                )
            out += [(p, f"auto: measured {how} in study {study}") for p, study, how in best]
        seen, unique = set(), []
        for point, why in out:
            point = self.learner.canonical(point) if self.learner is not None else point
            key = self._key(point)
            if key not in seen:
                seen.add(key)
                unique.append((point, why))
        return unique

    def _key(self, point: dict[str, str]) -> tuple:
        """Points the model knows to behave alike share a key (canonical.py)."""
        if self.learner is not None:
            point = self.learner.canonical(point)
        return canonical.key(self.space, point)

    def default_point(self, ctx) -> dict[str, str]:
        """The point the default runs, dimension by dimension: the baseline's value, else the library's
        default, else the dimension's first value."""

        flat = settings.flatten(ctx.store.config.baseline) if ctx.store.config.baseline else {}
        out = {}
        for d in self.space.dimensions:
            value = d.label_setting(flat)
            if value is None and not (d.knobs() & set(flat)):
                lib = library_default(d.knob) if d.knob else None
                value = d.label(lib) if lib in d.values else d.label(None) if None in d.values else None
            out[d.name] = value if value is not None else d.labels[0]
        return out

    # ---- the search ----

    def propose(self, ctx):
        pending = [p for p, _ in self._first(ctx) if p not in self.ran]
        if pending:
            measured = self._measured(ctx)
            self.ran += [p for p in pending if p in measured]
            pending = [p for p in pending if p not in measured]
        if pending:
            return pending[0]
        change = self._one_change(ctx)
        if change is not None or self.learner is None:
            return change or SAMPLER
        return self._learnt(ctx)

    def observe(self, ctx, record, measurement):
        """Every run corrects the model: its phase times (or its value) at its point."""
        if record.kind not in ("baseline", "trial") or measurement is None or not measurement.ok:
            return
        labels = self.space.labels_of(record.settings) if record.settings else None
        if record.settings and labels is None:
            return
        times, value = learn.times_of(measurement), measurement.value
        if self.learner is None:
            self._heard.append((labels, times, value))
        else:
            self.learner.observe(labels or self.default_point(ctx), times, value)

    def _learnt(self, ctx) -> dict[str, str] | None:
        """The next point by the corrected model's optimistic bound: among the one-change steps from the best
        point measured so far while any is left, else among every point not measured (up to equivalence);
        None when every point of the space was. Steps first: the analytical model may see almost no difference
        between points (a strided run priced in microseconds: its costs are not what takes the time), and then
        a far point it prefers is a blind guess, while a step keeps what the runs so far found."""
        learner = self.learner
        assert learner is not None
        measured = {self._key(p) for p in self._measured(ctx) if p is not None}
        measured.add(self._key(self.default_point(ctx)))
        base = self._best_point(ctx)
        near = [p for p in self._neighbours(base) if canonical.key(self.space, p) not in measured] if self.near else []
        # the checks' and rules' evidence orders the steps: first those to a value they recommend, last those
        # away from one (the model's optimism alone would undo them where its counts see a few percent)
        tiers: list[list[dict[str, str]]] = [[], [], []]
        for p in near:
            changed = [(n, v) for n, v in p.items() if base[n] != v]
            to = any(c in self.advised for c in changed)
            away = any((n, base[n]) in self.advised for n, _ in changed)
            tiers[0 if to else 2 if away else 1].append(p)
        pick = learner.best(next((t for t in tiers if t), []))
        where = ", one change from the best point so far"
        if pick is None:
            pick = learner.best([p for p in self._candidates(ctx) if canonical.key(self.space, p) not in measured])
            where = ""
        if pick is None:
            return None
        point, bound, mean = pick
        sign = 1.0 if ctx.objective.key(1.0) > 0 else -1.0
        unit = ctx.objective.unit
        self.explained[tuple(sorted(point.items()))] = (
            f"{LEARNT} {sign * mean:,.4g} {unit} expected, up to {sign * bound:,.4g} {unit} where it is uncertain, "
            f"after {len(learner.seen)} run(s){where}"
        )
        return point

    def _best_point(self, ctx) -> dict[str, str]:
        """The best point measured so far (by its runs' median), or the default when that is better."""
        best, base = ctx.store.results.best_pool(), self.default_point(ctx)
        default = ctx.store.results.default_value()
        if best is not None and (default is None or ctx.objective.key(best.median) >= ctx.objective.key(default)):
            base = self.space.labels_of(best.settings) or base
        return base

    def _neighbours(self, base: dict[str, str]) -> list[dict[str, str]]:
        """The canonical points one dimension's value away from `base`."""
        assert self.learner is not None
        out, seen = [], {self._key(base)}
        for d in self.space.dimensions:
            for label in d.labels:
                c = self.learner.canonical({**base, d.name: label})
                k = canonical.key(self.space, c)
                if k not in seen:
                    seen.add(k)
                    out.append(c)
        return out

    def _candidates(self, ctx) -> list[dict[str, str]]:
        """The canonical points to choose among: every one of a small space; of a large one, a random sample
        and every one-change neighbour of the best point measured."""
        learner = self.learner
        assert learner is not None
        names = [d.name for d in self.space.dimensions]
        if self.space.size() <= ENUMERATE:
            if self._points is None:
                seen, self._points = set(), []
                for row in itertools.product(*(d.labels for d in self.space.dimensions)):
                    p = learner.canonical(dict(zip(names, row)))
                    k = canonical.key(self.space, p)
                    if k not in seen:
                        seen.add(k)
                        self._points.append(p)
            return self._points
        rng = random.Random(f"{self.seed}:{len(learner.seen)}")
        raw = [{d.name: rng.choice(d.labels) for d in self.space.dimensions} for _ in range(SAMPLE)]
        best = ctx.store.results.best_pool()
        base = (self.space.labels_of(best.settings) if best is not None else None) or self.default_point(ctx)
        raw += [{**base, d.name: label} for d in self.space.dimensions for label in d.labels]
        out, seen = [], set()
        for p in raw:
            c = learner.canonical(p)
            k = canonical.key(self.space, c)
            if k not in seen:
                seen.add(k)
                out.append(c)
        return out

    def _measured(self, ctx) -> list[dict[str, str] | None]:
        """The points of the search trials so far. A trial's settings are completed with what each value
        implies, so points are compared by their labels; each finished trial's are worked out once."""
        out = []
        for r in ctx.store.trials.search_trials():
            labels = self._labels.get(r.id) or self.space.labels_of(r.settings)
            if r.finished:
                self._labels[r.id] = labels
            out.append(labels)
        return out

    def _one_change(self, ctx) -> dict[str, str] | None:
        """The next point that changes one dimension the model does not cover from the best point measured
        so far (or the default, when it is better); None when explore runs have been made or none is left."""
        if not self.uncovered:
            return None
        made = sum(1 for r in ctx.store.trials.search_trials() if str(r.attrs.get("why", "")).startswith(EXPLORE))
        if made >= self.n_explore:
            return None
        measured = self._measured(ctx)
        base = self._best_point(ctx)
        for name in self.uncovered:
            for label in self.space.dimension(name).labels:
                point = {**base, name: label}
                if label != base[name] and point not in measured:
                    self.explained[tuple(sorted(point.items()))] = (
                        f"{EXPLORE} {name}={label} from the best point so far (not covered by the model)"
                    )
                    return point
        return None

    def explain(self, ctx, point):
        known = next((why for p, why in self._first(ctx) if p == point), None)
        # a change is explained once: the sampler may draw the same point again later, for its own reasons
        return known or self.explained.pop(tuple(sorted(point.items())), None)
