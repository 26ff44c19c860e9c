"""One worker's tuning loop: prepare the strategy, measure the default, ask the
strategy, run, measure, tell; stop by rule; confirm the best against the noise.

Every run becomes a record of the study (`store.Store`), which derives
everything else. Several workers (processes, machines) can run this loop on
one study: the confirmation round and a strategy's training are exclusive
sections that one worker runs, under a lease, while the others wait; every
worker then reports the verdict of that one round.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, cast

import optuna

from .. import settings
from ..settings import complete
from . import noise
from . import stop as stops
from .evaluate import Evaluator, Measurement, reference_of, requested
from .objective import Objective
from .protocol import SAMPLER, Context, Strategy, sample
from .space import SearchSpace, unused_layers
from .store import (
    BASELINE,
    CONFIRMATION,
    DEFAULT,
    TRAINING,
    Asked,
    Lease,
    LeaseLost,
    Record,
    Section,
    Store,
    canonical,
    signature,
)
from .study.derive import median_of
from .study.leases import Held
from .study.recovery import MAX_STARTS
from .tune_error import TuneError
from .verdict import ROUND, Outcome, Verdicts

Progress = Callable[[dict], None]
POLL_S = 0.5  # how often a worker looks again at a point another worker is measuring
WAIT_S = 1.0  # how often a worker waiting for the confirmation round's verdict looks again
PUBLISH_S = 0.02  # how often it looks again at a peer's trial that has not published its point yet
SAME_AS_DEFAULT = DEFAULT  # duplicate_of of a trial whose settings took effect as the default's


def trial_doc(baseline: dict, flat: Mapping[str, Any], meta: dict | None = None) -> dict:
    """The baseline document with the trial's knobs as a last group, overriding it knob by knob."""
    doc = settings.validate(baseline)
    doc["groups"] = doc.get("groups", []) + settings.from_flat(flat)["groups"]
    if meta:
        doc["meta"] = meta
    return doc


def effective_of(m: Measurement, doc: dict) -> dict[str, list[str]]:
    """What took effect in a run: read back, or what was requested when nothing was read back."""
    return m.effective if m.effective is not None else requested(doc)


class Tuner:
    def __init__(
        self,
        store: Store,
        evaluator: Evaluator,
        space: SearchSpace,
        objective: Objective,
        strategy: Strategy | None = None,
        progress: Progress | None = None,
        eval_log: Path | None = None,
        rules: list[stops.StopRule] | None = None,
    ):
        """strategy None: the default's runs and the confirmation round only (tests). A study's outcome without
        running anything: `verdict.Verdicts(store, objective).result()`."""
        self.store, self.evaluator, self.space, self.objective = store, evaluator, space, objective
        self.strategy = strategy or Strategy(space, store.config.seed, {})
        c = store.config
        self.baseline = settings.validate(c.baseline)
        self.repeats, self.baseline_every, self.nodes = c.repeats, c.baseline_every, c.nodes
        self.confirm_top, self.confirm_rounds, self.alpha = c.confirm_top, c.confirm_rounds, c.alpha
        self.progress = progress or (lambda event: None)
        self.eval_log = eval_log
        self._own_rules = rules is None
        self.rules = rules if rules is not None else stops.default_rules(c, self.strategy, objective)
        self.notes: list[str] = []
        self.verdicts = Verdicts(store, objective, self.notes, self.note)  # the same notes: an outcome carries them
        self.dropped: list[str] = []  # dimensions of layers the default's run showed unused (`narrow`)
        self.unused: dict[str, str] = {}  # those layers, with why
        self.on_start: Callable[[Tuner], None] | None = None  # once the default is measured (the header)
        self._use(space, self.strategy)
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
        self.unused = unused_layers(self.store.baseline_report())
        space, self.dropped = self.space.without_layers(self.unused)
        if self.dropped:
            self._use(space, type(self.strategy)(space, self.strategy.seed, self.strategy.options))

    # ---- what strategies and stop rules see ----

    @property
    def budget(self):
        return self.store.budget

    def context(self) -> Context:
        return Context(
            self.store, self.space, self.objective, self._strategy_measure, self.note, self.store.config.seed
        )

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
            self.progress({"kind": "note", "text": text, "clock": self.clock()})

    def clock(self) -> float:
        """Tuning time: how long the study has been worked on, across resumes and workers."""
        return self.store.clock()

    # ---- estimates, for the time budget ----

    def run_estimate(self) -> float:
        return self.store.run_estimate()

    def confirmation_rounds(self, candidates: int) -> tuple[int, int]:
        """(rounds planned, rounds needed): the rounds asked for, raised to the fewest with which
        a gain over this many candidates can be significant at all."""
        needed = noise.rounds_needed(candidates * noise.LOOKS, self.alpha)
        return max(self.confirm_rounds, needed), needed

    def confirmation_estimate(self, candidates: int | None = None) -> float:
        k = self.confirm_top if candidates is None else candidates
        return self.confirmation_rounds(k)[0] * (k + 1) * self.run_estimate()

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
            left = max(0, b.trials - self.store.trials_run())
            every = self.baseline_every
            baselines = (self._since_baseline + left) // every if every else 0
            runs.append(left * self.repeats + baselines)
        if b.runs is not None:
            runs.append(max(0, b.runs - self.store.runs_spent()))
        return min(runs) * self.run_estimate() + self.confirmation_estimate() if runs else None

    # ---- measuring ----

    def _measure(self, doc: dict, label: str) -> Measurement:
        try:
            m = self.evaluator.evaluate(doc, label)
        except OSError as e:  # the tuner's own files, not the application
            why = f"the tuner could not run {label}: {e.strerror or e}"
            m = Measurement(False, None, 0.0, why, fault=why)
        if self.eval_log:
            try:
                with open(self.eval_log, "a") as f:
                    f.write(
                        json.dumps({"label": label, "ok": m.ok, "value": m.value, "at_s": round(self.clock(), 3)})
                        + "\n"
                    )
            except OSError as e:
                self.note(f"cannot append to --eval-log {self.eval_log}: {e.strerror}")
        return m

    def _signature(self, m: Measurement, doc: dict) -> str:
        return self.store.signature(effective_of(m, doc))

    def _observe(self, record: Record, m: Measurement | None) -> None:
        self.strategy.observe(self.context(), record, m)

    def _record(
        self, kind: str, flat: Mapping[str, Any], doc: dict, m: Measurement, attrs: Mapping[str, Any] | None = None
    ) -> Record:
        attrs = dict(attrs or {})
        sig = self._signature(m, doc) if m.ok else None
        if kind in (BASELINE, CONFIRMATION) and m.ok:  # a production run's time and I/O share (viability)
            attrs["details"] = {
                k: m.details.get(k) for k in ("io_time_s", "wall_time_s", "bytes_written", "bytes_read", "ranks")
            }
        if kind == BASELINE and m.ok:
            if self.store.reference is None:  # the default's effective settings: signatures are relative to them
                attrs["reference"] = reference_of(m)
                sig = signature(effective_of(m, doc), attrs["reference"], self.nodes)
        rec = self.store.add_run(
            kind,
            settings=flat,
            value=m.value if m.ok else None,
            error=m.error,
            signature=sig,
            duration_s=m.duration_s,
            attrs=attrs,
            report=m.report if kind == BASELINE and m.ok else None,
        )
        self._observe(rec, m)
        return rec

    def _baseline(self, reason: str) -> Measurement:
        n = self.store.count(BASELINE)
        m = self._measure(self.baseline, f"baseline-{n:03d}")
        if m.fault is None:
            self._record(BASELINE, {}, self.baseline, m)
        self.progress(
            {
                "kind": "baseline",
                "value": m.value,
                "error": m.error,
                "default": self.store.default_value(),
                "reason": reason,
                "clock": self.clock(),
            }
        )
        return m

    def _strategy_measure(
        self, flat: Mapping[str, Any], kind: str = TRAINING, label: str | None = None, why: str | None = None
    ) -> tuple[Record, Measurement]:
        """A strategy's own run of a point (flat settings), recorded under its kind."""
        flat = complete(dict(flat), self.nodes)
        n = self.store.count(kind)
        m = self._measure(trial_doc(self.baseline, flat), label or f"{kind}-{n:03d}")
        if m.fault:
            raise TuneError(m.fault)
        rec = self._record(kind, flat, trial_doc(self.baseline, flat), m, {"why": why} if why else None)
        self.progress(
            {"kind": kind, "number": n, "settings": flat, "value": m.value, "error": m.error, "clock": self.clock()}
        )
        return rec, m

    # ---- the study ----

    def best(self) -> tuple[int, float] | None:
        """(first record, current value) of the best effective configuration measured so far."""
        best = self.store.best_pool()
        return (cast(int, best.first), median_of(best)) if best else None

    def name_of(self, rid: int) -> str:
        """How the log and trials.csv name a record that measured a point first: trial N, training run N."""
        r = self.store.record(rid)
        if r is not None and r.kind == TRAINING:
            return f"training run {sum(1 for x in self.store.records(TRAINING) if x.id < rid)}"
        return f"trial {r.number if r is not None else '?'}"

    def run(self, scratch: str | None = None) -> Outcome:
        self.store.begin_session(scratch)
        for number in self.store.recover():
            if number in self.store.given_up:
                self.note(
                    f"trial {number} was left running by a stopped tuner, its settings' start {MAX_STARTS} "
                    f"of {MAX_STARTS}: it is given up, not run again"
                )
            else:
                self.note(f"trial {number} was left running by a stopped tuner: it runs again")
        clean = getattr(self.evaluator, "clean_leftovers", None)
        if clean is not None:  # runs a killed tuner left in the scratch directory
            interrupted = [r.number for r in self.store.search_trials() if r.interrupted]
            for left in clean(interrupted, everything=not self.store.live_peers()):
                self.progress(
                    {"kind": "note", "text": f"removed {left}, left by an interrupted run", "clock": self.clock()}
                )
        self._measure_default()  # first: signatures of every other run are relative to the default's settings
        self.narrow()
        if self.on_start is not None:
            self.on_start(self)
        self._prepare()
        stop = self.search()
        outcome = self.confirm(stop)
        self.store.touch_session()
        return outcome

    def _prepare(self) -> None:
        """The strategy's training runs, once for the study: one worker prepares, the others wait."""
        if type(self.strategy).prepare is Strategy.prepare:
            return
        with self.store.exclusive(f"training:{self.strategy.name}") as section:
            if section.mine:
                self.strategy.prepare(self.context())

    def _measure_default(self) -> None:
        """The default's first runs (as many as a trial's). A run that fails is tried again, a bounded
        number of times; with no run at all there is nothing to tune."""
        wanted = self.repeats
        attempts = 0
        while len(self.store.default_runs) < wanted:
            if attempts >= 2 * wanted:
                self.note(
                    f"only {len(self.store.default_runs)} of {wanted} runs of the default settings "
                    f"succeeded in {attempts} attempts; the default is the median of those"
                )
                return
            m = self._baseline("start")
            attempts += 1
            if m.fault:
                raise TuneError(m.fault)
            if not m.ok and not self.store.default_runs:
                raise TuneError(
                    f"the application fails with its default settings, so there is nothing to tune: {m.error}"
                )

    def search(self) -> stops.Stop:
        while True:
            self.store.recover()  # a peer that died: its trial runs again
            other = self.store.held_by_others(ROUND)
            if other is not None:  # the round runs alone: no trial starts beside it
                return stops.Stop(
                    "confirmation", f"another worker ({other.host}, process {other.pid}) started the confirmation round"
                )
            stop = stops.first_stop(self.rules, self)
            if stop:
                return stop
            if self.baseline_every and self._since_baseline >= self.baseline_every:
                if self._baseline("interleaved").fault:
                    return stops.Stop("tuner-io", self._baseline_fault())
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
            fault = self._evaluate_trial(asked, flat)
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
        flat = complete(self.space.point_settings(self.space.decode(params)), self.nodes)
        return flat, self.strategy.explain(self.context(), dict(params))

    def _baseline_fault(self) -> str:
        return "the tuner cannot run the application: its scratch directory is full or unwritable"

    def _reuse(self, asked: Asked, flat: dict) -> bool:
        """A point measured before costs no run: it shares that result, or that failure. It is
        placed on the tuning clock when it was proposed. A point another worker is measuring right
        now is waited for, then shared."""
        while (peer := self.store.in_flight(flat, asked.number)) is not None:
            # a peer's trial asked just before this one publishes its point within milliseconds
            time.sleep(POLL_S if "settings" in peer.attrs else PUBLISH_S)
            self.store.recover()
        key = canonical(flat)
        if key in self.store.failed:
            first = self.store.failed[key]
            self.store.tell(
                asked,
                settings=flat,
                runs=[],
                signature=None,
                cost_runs=0,
                duration_s=0.0,
                duplicate_of=first,
                error=f"same settings as {self.name_of(first)}, which failed",
            )
        elif key in self.store.requested:
            first, sig = self.store.requested[key]
            self.store.tell(
                asked,
                settings=flat,
                runs=[],
                signature=sig,
                cost_runs=0,
                duration_s=0.0,
                duplicate_of=first if sig not in self.store.default_signatures() else DEFAULT,
                error=None,
                value=self.store.value_of(sig),
            )
        else:
            return False
        return True

    def _evaluate_trial(self, asked: Asked, flat: dict) -> str | None:
        """Runs a new point; returns why the tuner must stop when its own I/O failed."""
        doc = trial_doc(self.baseline, flat)
        label = f"t{asked.index:04d}"
        runs: list[float] = []
        measured: list[Measurement] = []
        duplicate_of: int | str | None = None
        start = self.clock()
        first = self._measure(doc, f"{label}-r1")
        if first.fault:
            self.store.abandon(asked, first.fault)
            return first.fault
        measured.append(first)
        attempted, error, sig = 1, first.error, None
        if first.ok:
            runs.append(cast(float, first.value))
            sig = self._signature(first, doc)
            if sig in self.store.default_signatures():  # took effect as the default: a run of the default
                duplicate_of = DEFAULT
            elif sig in self.store.pools:  # the same settings took effect before: one result for both
                duplicate_of = self.store.pools[sig].first
            else:
                for r in range(2, self.repeats + 1):
                    m = self._measure(doc, f"{label}-r{r}")
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
            pool = self.store.pools.get(sig) if sig is not None else None
            shared = self.store.default_runs if duplicate_of == DEFAULT else pool.runs if pool is not None else []
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
            self._observe(rec, m)
        best = self.best()
        default = self.store.default_value()
        event = {
            "kind": "trial",
            "number": asked.index,
            "settings": flat,
            "clock": self.clock(),
            "best": best[1] if best else None,
            "default": default,
            "gain": self.objective.gain(best[1], default) if best and default else None,
            "done": self.store.trials_run(),
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
        return None

    # ---- confirmation ----

    def candidates(self) -> list[dict]:
        pools = self.store.ranked_pools()[: self.confirm_top]
        training = [r.id for r in self.store.records(TRAINING)]
        out = []
        for p in pools:
            who: dict[str, Any]
            if p.first in training:  # a strategy's training run can be among the best
                n = training.index(p.first)
                who = {"trial": None, "name": f"training run {n}", "run": f"training-{n:03d}"}
            else:
                i = self.store.index_of(cast(int, p.first))
                who = {"trial": i, "name": f"trial {i}", "run": f"t{i:04d}"}
            out.append({"signature": p.signature, "settings": p.settings, "record": p.first, **who})
        return out

    def _rounds(self, k: int, done: int) -> int:
        """The confirmation rounds to run for k candidates (done: those run already), saying so when
        they differ from those asked for."""
        planned, needed = self.confirmation_rounds(k)
        rounds = planned
        if self.budget.seconds is not None:
            per_round = (k + 1) * self.run_estimate()
            affordable = done + int(max(0.0, self.budget.seconds - self.clock()) // per_round)
            rounds = max(self.confirm_rounds, min(planned, affordable))
        if rounds < needed:
            self.note(
                f"the time budget leaves room for {rounds} confirmation rounds, but with {k} candidate(s) a "
                f"gain needs at least {needed} (with {rounds} the smallest possible p is "
                f"{noise.smallest_p(rounds):.3g}, and {self._level(k):.3g} is needed): no gain can "
                f"be declared. Give more --time, or fewer --confirm-top"
            )
        elif rounds > self.confirm_rounds:
            self.note(
                f"{rounds} confirmation rounds instead of {self.confirm_rounds}: with "
                f"{self.confirm_rounds} and {k} candidate(s) the smallest possible p is "
                f"{noise.smallest_p(self.confirm_rounds):.3g}, and a gain needs p < {self._level(k):.3g}"
            )
        return rounds

    def _level(self, k: int) -> float:
        """The p-value a gain needs: alpha over the candidates and the looks (noise.LOOKS)."""
        return self.alpha / (k * noise.LOOKS)

    def _more_rounds(self, stop: stops.Stop, key: str, cands: list[dict], rounds: int) -> int:
        """Rounds to add to a confirmation whose verdict is undecided (noise.undecided): as many again as
        planned, once, as far as the time budget allows."""
        verdict = self.verdicts.judge(stop, key, cands).verdict
        if verdict is None or not noise.undecided(verdict):
            return 0
        more = rounds
        if self.budget.seconds is not None:
            per_round = (len(cands) + 1) * self.run_estimate()
            more = min(more, int(max(0.0, self.budget.seconds - self.clock()) // per_round))
        if more:
            self.note(
                f"the confirmation is undecided after {rounds} rounds (p = {verdict.p_value:.3g}, "
                f"{verdict.gain:.2f}x the default with a noise of {verdict.noise:.0%}): {more} more rounds"
            )
        return more

    def confirm(self, stop: stops.Stop) -> Outcome:
        """The confirmation round, once for the study: the worker that gets its lease runs it (alone: it waits
        for the trials others still run), the others wait for it; all report its verdict. A holder that dies
        loses the lease by its heartbeat, and one waiting worker runs the round again."""
        if stop.rule == "tuner-io":
            return Outcome(
                self.store.default_value(),
                self.verdicts.best_doc(None, None),
                None,
                None,
                stop,
                self.notes + ["no confirmation round: the tuner cannot run the application any more"],
            )
        name = self._round_name()
        while True:
            try:
                with self.store.exclusive(name, {"stop": stop.to_json()}, poll_s=WAIT_S) as section:
                    if section.mine:
                        self._hold_round(section, stop)
                lease = self.store.lease(name)
                break
            except LeaseLost as e:
                self.note(f"{e}: this worker waits for the round's verdict instead")
        return self.verdicts.outcome(cast(Lease, lease), ran=section.mine)  # the section ended: its lease is done

    def _round_name(self) -> str:
        """The lease of the round to report: the last one, or a new one after a resume that searched more."""
        rounds = {
            int(n[len(ROUND) :]): lease
            for n, lease in self.store.leases_named(ROUND).items()
            if n[len(ROUND) :].isdigit()
        }
        if not rounds:
            return f"{ROUND}0"
        k = max(rounds)
        last = rounds[k]
        if last.state == "done" and last.content.get("trials_run") != self.store.trials_run():
            self.note("the search ran more trials since the last confirmation round: confirming again")
            return f"{ROUND}{k + 1}"
        return f"{ROUND}{k}"

    def _hold_round(self, section: Section, stop: stops.Stop) -> None:
        held = cast(Held, section.held)  # the section is this worker's: it holds the lease
        if section.restarted:
            self.note(
                f"the worker that was running the confirmation round stopped (its lease expired): this "
                f"worker runs the round again, from the start (start {section.lease.attempt})"
            )
        # the round runs alone: trials other workers still run would disturb its runs (shared nodes)
        owed_run = False
        while True:
            self.store.recover()
            if self.store.others_running():
                time.sleep(POLL_S)
            elif self.store.owed() and not owed_run:
                owed_run = True
                self.search()  # trials a stopped worker left, queued to run again: before the candidates
            else:
                break
            held.check()
        cands = self.candidates()
        trials_run = self.store.trials_run()
        plan = f"{section.lease.name}/{section.lease.attempt}"
        if not cands:
            held.set(content={"stop": stop.to_json(), "trials_run": trials_run, "plan": plan, "candidates": []})
            return
        rounds = self._rounds(len(cands), 0)
        held.set(
            content={
                "stop": stop.to_json(),
                "trials_run": trials_run,
                "plan": plan,
                "candidates": cands,
                "rounds": rounds,
            }
        )
        self._confirmation_rounds(plan, cands, 0, rounds, held)
        more = self._more_rounds(stop, plan, cands, rounds)
        if more:
            held.set(
                content={
                    "stop": stop.to_json(),
                    "trials_run": trials_run,
                    "plan": plan,
                    "candidates": cands,
                    "rounds": rounds + more,
                }
            )
            self._confirmation_rounds(plan, cands, rounds, rounds + more, held)

    def _confirmation_rounds(self, key: str, cands: list[dict], first: int, rounds: int, held=None) -> None:
        for rnd in range(first, rounds):
            entries = [None] + cands
            shift = rnd % len(entries)
            for entry in entries[shift:] + entries[:shift]:  # rotated, so no one always runs first
                if held is not None:
                    held.check()
                who = DEFAULT if entry is None else entry["signature"]
                flat = {} if entry is None else entry["settings"]
                doc = self.baseline if entry is None else trial_doc(self.baseline, flat)
                label = f"confirm-{rnd}-{'default' if entry is None else entry['run']}"
                m = self._measure(doc, label)
                if m.fault:
                    raise TuneError(m.fault)
                self._record(
                    CONFIRMATION,
                    flat,
                    doc,
                    m,
                    {"plan": key, "round": rnd, "candidate": who, "trial": None if entry is None else entry["trial"]},
                )
                self.progress(
                    {
                        "kind": "confirm",
                        "round": rnd + 1,
                        "rounds": rounds,
                        "runs_in_round": len(entries),
                        "trial": entry and entry["trial"],
                        "name": entry["name"] if entry else "default",
                        "value": m.value,
                        "error": m.error,
                        "clock": self.clock(),
                    }
                )
