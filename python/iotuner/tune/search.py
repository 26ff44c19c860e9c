"""The search: the default's first runs, the strategy's training, then trial after trial (ask the strategy,
run, tell) until a stop rule ends it. Several workers search one study: each trial is a record one worker owns
by its heartbeat until it tells it, a point measured or being measured by another worker costs no run, the
strategy's training is an exclusive section (a lease) one worker runs while the others wait, and no trial
starts while a worker holds the confirmation round's lease.

The stop rules see the search (`stop.SearchState`): the study, the budget, the strategy and its space, and
what the next trial and the confirmation round would cost."""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping
from typing import Any, Callable, cast

import optuna

from ..settings import complete
from . import stop as stops
from .evaluate import Measurement
from .objective import Objective
from .protocol import SAMPLER, Context, Strategy, sample
from .runs import Progress, Runs
from .space import SearchSpace, unused_layers
from .store import DEFAULT, TRAINING, Asked, Record, Store, canonical
from .study.derive import median_of
from .trialdoc import trial_doc
from .tune_error import TuneError
from .verdict import ROUND

POLL_S = 0.5  # how often a worker looks again at a point another worker is measuring
PUBLISH_S = 0.02  # how often it looks again at a peer's trial that has not published its point yet


class Search:
    """rules None: the study's (its budget, then its early stopper); confirmation_estimate: what the
    confirmation round will cost (the time budget keeps room for it)."""

    def __init__(
        self,
        store: Store,
        runs: Runs,
        space: SearchSpace,
        objective: Objective,
        strategy: Strategy,
        progress: Progress,
        notes: list[str],
        note: Callable[[str], None],
        confirmation_estimate: Callable[[], float],
        rules: list[stops.StopRule] | None = None,
    ):
        self.store, self.runs, self.objective, self.progress = store, runs, objective, progress
        self.notes, self.note, self.confirmation_estimate = notes, note, confirmation_estimate
        c = store.config
        self.repeats, self.baseline_every = c.repeats, c.baseline_every
        self._own_rules = rules is None
        self.rules = rules if rules is not None else stops.default_rules(c, strategy, objective)
        self.dropped: list[str] = []  # dimensions of layers the default's run showed unused (`narrow`)
        self.unused: dict[str, str] = {}  # those layers, with why
        self._use(space, strategy)
        self.reproposals = 0
        self._since_baseline = 0

    def _use(self, space: SearchSpace, strategy: Strategy) -> None:
        self.space, self.strategy = space, strategy
        if self._own_rules:
            self.rules = stops.default_rules(self.store.config, strategy, self.objective)
        if self.budget.runs is not None:  # a strategy that trains sizes its training to the run budget
            fitted = strategy.fit_runs(self.budget.runs - self.repeats, self.repeats)
            if fitted and fitted not in self.notes:  # the study's header says how many training runs
                self.notes.append(fitted)
        self.sampler = strategy.sampler(self.context())
        self.distributions = {d.name: optuna.distributions.CategoricalDistribution(d.labels) for d in space.dimensions}

    def narrow(self) -> None:
        """Leaves out the dimensions of layers the default's run report shows the program never used (HDF5 knobs
        for a pure MPI-IO program): no trial then differs from another only in knobs that cannot act, and a
        strategy never spends a run on them. From the study's first report of the default, so every worker
        and every resume narrows alike."""
        self.unused = unused_layers(self.store.trials.baseline_report())
        space, self.dropped = self.space.without_layers(self.unused)
        if self.dropped:
            self._use(space, type(self.strategy)(space, self.strategy.seed, self.strategy.options))

    # ---- what strategies and stop rules see ----

    @property
    def budget(self):
        return self.store.budget

    def context(self) -> Context:
        return Context(self.store, self.space, self.objective, self.runs.point, self.note, self.store.config.seed)

    def observe(self, record: Record, m: Measurement | None) -> None:
        self.strategy.observe(self.context(), record, m)

    def clock(self) -> float:
        """Tuning time: how long the study has been worked on, across resumes and workers."""
        return self.store.workers.clock()

    def run_estimate(self) -> float:
        return self.store.results.run_estimate()

    def next_trial_runs(self) -> int:
        """The most application runs the next trial can cost: its repeats, and the baseline run due before it."""
        due = self.baseline_every and self._since_baseline >= self.baseline_every
        return self.repeats + (1 if due else 0)

    def next_trial_estimate(self) -> float:
        return self.next_trial_runs() * self.run_estimate()

    def time_left(self) -> float | None:
        """Tuning time left: the time budget's rest, or the estimate of what the trial or run budget still
        costs (trials with their repeats, the interleaved baseline runs, the confirmation round), the sooner."""
        b = self.budget
        if b.seconds is not None:
            return max(0.0, b.seconds - self.clock())
        runs = []
        if b.trials is not None:
            left = max(0, b.trials - self.store.trials.trials_run())
            every = self.baseline_every
            baselines = (self._since_baseline + left) // every if every else 0
            runs.append(left * self.repeats + baselines)
        if b.runs is not None:
            runs.append(max(0, b.runs - self.store.trials.runs_spent()))
        return min(runs) * self.run_estimate() + self.confirmation_estimate() if runs else None

    # ---- the study so far ----

    def best(self) -> tuple[int, float] | None:
        """(first record, current value) of the best effective configuration measured so far."""
        best = self.store.results.best_pool()
        return (cast(int, best.first), median_of(best)) if best else None

    def name_of(self, rid: int) -> str:
        """How the log and trials.csv name a record that measured a point first: trial N, training run N."""
        r = self.store.trials.record(rid)
        if r is not None and r.kind == TRAINING:
            return f"training run {sum(1 for x in self.store.trials.records(TRAINING) if x.id < rid)}"
        return f"trial {r.number if r is not None else '?'}"

    # ---- before the trials ----

    def measure_default(self) -> None:
        """The default's first runs (as many as a trial's). A run that fails is tried again, a bounded
        number of times; with no run at all there is nothing to tune."""
        wanted = self.repeats
        attempts = 0
        while len(self.store.results.default_runs) < wanted:
            if attempts >= 2 * wanted:
                self.note(
                    f"only {len(self.store.results.default_runs)} of {wanted} runs of the default settings "
                    f"succeeded in {attempts} attempts; the default is the median of those"
                )
                return
            m = self.runs.default("start")
            attempts += 1
            if m.fault:
                raise TuneError(m.fault)
            if not m.ok and not self.store.results.default_runs:
                raise TuneError(
                    f"the application fails with its default settings, so there is nothing to tune: {m.error}"
                )

    def prepare(self) -> None:
        """The strategy's training runs, once for the study: one worker prepares, the others wait."""
        if type(self.strategy).prepare is Strategy.prepare:
            return
        with self.store.workers.exclusive(f"training:{self.strategy.name}") as section:
            if section.mine:
                self.strategy.prepare(self.context())

    # ---- the trials ----

    def run(self) -> stops.Stop:
        """Trials until a stop rule, the strategy, or another worker's confirmation round ends the search."""
        while True:
            self.store.workers.recover()  # a peer that died: its trial runs again
            other = self.store.workers.held_by_others(ROUND)
            if other is not None:  # the round runs alone: no trial starts beside it
                return stops.Stop(
                    "confirmation", f"another worker ({other.host}, process {other.pid}) started the confirmation round"
                )
            stop = stops.first_stop(self.rules, self)
            if stop:
                return stop
            if self.baseline_every and self._since_baseline >= self.baseline_every:
                if self.runs.default("interleaved").fault:
                    return stops.Stop(
                        "tuner-io", "the tuner cannot run the application: its scratch directory is full or unwritable"
                    )
                self._since_baseline = 0
                continue
            point = self.strategy.propose(self.context())
            if point is None:  # the strategy's own reason, when it has one
                return stops.Stop(
                    "strategy", self.strategy.stop(self.context()) or "the strategy has no more points to try"
                )
            asked = self.store.ask(lambda trial, tid: self._choose(trial, tid, point), self._describe)  # noqa: B023 - called by ask, now
            flat = asked.settings
            if self._reuse(asked, flat):
                self.reproposals += 1
                continue
            self.reproposals = 0
            fault = self._evaluate(asked, flat)
            if fault:
                return stops.Stop("tuner-io", fault)
            self._since_baseline += 1

    def _choose(self, trial, tid: int, point) -> dict:
        """The point of a new trial: the strategy's own, or (for SAMPLER, or dimensions it left out) its
        Optuna sampler's choice, as {dimension: (value label, distribution)}."""
        fixed = {} if point is SAMPLER else dict(point)
        db = self.store.db
        study = db.sampling_study(self.sampler)
        values = sample(study, self.sampler, trial, self.distributions, fixed, lambda: db.trial_system_attrs(tid))
        return {name: (values[name], dist) for name, dist in self.distributions.items()}

    def _describe(self, params: Mapping[str, str]) -> tuple[dict, str | None]:
        """A trial's flat settings, and why the strategy proposed it."""
        flat = complete(self.space.point_settings(self.space.decode(params)), self.store.config.nodes)
        return flat, self.strategy.explain(self.context(), dict(params))

    def _reuse(self, asked: Asked, flat: dict) -> bool:
        """A point measured before costs no run: it shares that result, or that failure. It is
        placed on the tuning clock when it was proposed. A point another worker is measuring right
        now is waited for, then shared."""
        while (peer := self.store.workers.in_flight(flat, asked.number)) is not None:
            # a peer's trial asked just before this one publishes its point within milliseconds
            time.sleep(POLL_S if "settings" in peer.attrs else PUBLISH_S)
            self.store.workers.recover()
        key = canonical(flat)
        outcome: dict[str, Any]
        if key in self.store.results.failed:
            first = self.store.results.failed[key]
            outcome = {
                "signature": None,
                "duplicate_of": first,
                "error": f"same settings as {self.name_of(first)}, which failed",
            }
        elif key in self.store.results.requested:
            first, sig = self.store.results.requested[key]
            default = sig in self.store.results.default_signatures()
            outcome = {
                "signature": sig,
                "duplicate_of": DEFAULT if default else first,
                "error": None,
                "value": self.store.results.value_of(sig),
            }
        else:
            return False
        self.store.tell(asked, settings=flat, runs=[], cost_runs=0, duration_s=0.0, **outcome)
        return True

    def _evaluate(self, asked: Asked, flat: dict) -> str | None:
        """Runs a new point; returns why the tuner must stop when its own I/O failed."""
        doc = trial_doc(self.runs.baseline, flat)
        label = f"t{asked.index:04d}"
        runs: list[float] = []
        measured: list[Measurement] = []
        duplicate_of: int | str | None = None
        start = self.clock()
        first = self.runs.measure(doc, f"{label}-r1")
        if first.fault:
            self.store.abandon(asked, first.fault)
            return first.fault
        measured.append(first)
        attempted, error, sig = 1, first.error, None
        if first.ok:
            runs.append(cast(float, first.value))
            sig = self.runs.signature(first, doc)
            if sig in self.store.results.default_signatures():  # took effect as the default: a run of the default
                duplicate_of = DEFAULT
            elif sig in self.store.results.pools:  # the same settings took effect before: one result for both
                duplicate_of = self.store.results.pools[sig].first
            else:
                for r in range(2, self.repeats + 1):
                    m = self.runs.measure(doc, f"{label}-r{r}")
                    if m.fault:
                        self.store.abandon(asked, m.fault)
                        return m.fault
                    measured.append(m)
                    attempted += 1
                    if not m.ok:
                        error = f"run {r} of {self.repeats} failed: {m.error}"
                        break
                    runs.append(cast(float, m.value))
        value = None
        if error is None:
            pool = self.store.results.pools.get(sig) if sig is not None else None
            shared = (
                self.store.results.default_runs if duplicate_of == DEFAULT else pool.runs if pool is not None else []
            )
            value = statistics.median(list(shared) + runs)
        rec = self.store.tell(
            asked,
            settings=flat,
            runs=runs if error is None else [],
            signature=sig,
            error=error,
            cost_runs=attempted,
            duration_s=self.clock() - start,
            duplicate_of=duplicate_of,
            value=value,
            retry=any(m.retry for m in measured),
        )
        for m in measured:
            self.observe(rec, m)
        self._report(asked, flat, error, value, runs, duplicate_of)
        return None

    def _report(
        self,
        asked: Asked,
        flat: dict,
        error: str | None,
        value: float | None,
        runs: list[float],
        duplicate_of: int | str | None,
    ) -> None:
        """The trial's progress event: its result, and the best so far against the default."""
        best = self.best()
        default = self.store.results.default_value()
        event: dict[str, Any] = {
            "kind": "trial",
            "number": asked.index,
            "settings": flat,
            "clock": self.clock(),
            "best": best[1] if best else None,
            "default": default,
            "gain": self.objective.gain(best[1], default) if best and default else None,
            "done": self.store.trials.trials_run(),
            "budget": self.budget.trials,
            "left_s": self.time_left(),
        }
        if error is not None:
            event.update(error=error)
        else:
            event.update(
                value=value,
                runs=runs,
                duplicate_of=self.name_of(duplicate_of) if isinstance(duplicate_of, int) else duplicate_of,
            )
        self.progress(event)
