"""The tuning loop: ask the strategy, run, measure, tell; budgets, an
interleaved baseline, deduplication, and a confirmation round at the end."""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from optuna.trial import TrialState

from .. import settings
from . import noise
from .evaluate import Evaluator, Measurement, reference_of, requested, signature
from .objective import Objective
from .space import SearchSpace, complete
from .study import Pool, StudyStore, canonical

Progress = Callable[[dict], None]
MAX_REPROPOSALS = 50  # consecutive proposals of measured points before calling the space exhausted
SAME_AS_DEFAULT = "default"  # duplicate_of of a trial whose settings took effect as the default's


class TuneError(RuntimeError):
    pass


@dataclass
class Budget:
    """The study's totals, across resumes."""
    trials: int | None = None
    seconds: float | None = None


@dataclass
class Options:
    repeats: int = 1
    baseline_every: int = 5
    confirm_top: int = 3
    confirm_rounds: int = 5
    nodes: int = 1
    alpha: float = 0.05


@dataclass
class Outcome:
    default: float | None  # median of the default's runs during the search
    best_doc: dict
    verdict: noise.Verdict | None
    winner: dict | None  # {"trial", "signature", "settings", "median"} of the confirmed winner
    stopped_because: str
    notes: list[str] = field(default_factory=list)
    confirmed_default: float | None = None  # median of the default's runs in the confirmation round

    @property
    def significant(self) -> bool:
        return bool(self.verdict and self.winner and self.verdict.significant)


def trial_doc(baseline: dict, flat: dict[str, Any], meta: dict | None = None) -> dict:
    """The baseline document with the trial's knobs as a last group, overriding it knob by knob."""
    doc = settings.validate(baseline)
    trial = settings.from_flat(flat)["groups"]
    doc["groups"] = doc.get("groups", []) + trial
    if meta:
        doc["meta"] = meta
    return doc


class Tuner:
    def __init__(self, store: StudyStore, evaluator: Evaluator, space: SearchSpace, objective: Objective,
                 baseline: dict, budget: Budget, options: Options, progress: Progress | None = None,
                 eval_log: Path | None = None):
        self.store, self.evaluator, self.space, self.objective = store, evaluator, space, objective
        self.baseline, self.budget, self.options = settings.validate(baseline), budget, options
        self.progress = progress or (lambda event: None)
        self.eval_log = eval_log
        self._start, self._clock0 = time.monotonic(), store.clock
        self._durations: list[float] = [t.user_attrs.get("duration_s", 0) / max(1, len(t.user_attrs.get("runs", [1])))
                                        for t in store.completed() if t.user_attrs.get("cost_runs")]
        self._since_baseline = 0
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
            self.progress({"kind": "note", "text": text, "clock": self.clock()})

    # ---- clocks and budgets ----

    def clock(self) -> float:
        """Tuning time: time this study has spent running, across resumes."""
        return self._clock0 + time.monotonic() - self._start

    def _run_estimate(self) -> float:
        return statistics.median(self._durations) if self._durations else 1.0

    def confirmation_rounds(self, candidates: int) -> tuple[int, int]:
        """(rounds planned, rounds needed): the rounds asked for, raised to the fewest with which
        a gain over this many candidates can be significant at all."""
        needed = noise.rounds_needed(candidates, self.options.alpha)
        return max(self.options.confirm_rounds, needed), needed

    def _confirmation_estimate(self, candidates: int | None = None) -> float:
        k = self.options.confirm_top if candidates is None else candidates
        return self.confirmation_rounds(k)[0] * (k + 1) * self._run_estimate()

    def _next_trial_estimate(self) -> float:
        """The most the next trial can cost: its repeats, and the baseline run due before it."""
        due = self.options.baseline_every and self._since_baseline >= self.options.baseline_every
        return (self.options.repeats + (1 if due else 0)) * self._run_estimate()

    def time_left(self) -> float | None:
        """Tuning time left: the time budget's rest, or the estimate of what the trial budget still costs
        (trials with their repeats, the interleaved baseline runs, the confirmation round)."""
        if self.budget.seconds is not None:
            return max(0.0, self.budget.seconds - self.clock())
        if self.budget.trials is not None:
            left = max(0, self.budget.trials - self.store.trials_run())
            every = self.options.baseline_every
            baselines = (self._since_baseline + left) // every if every else 0
            return (left * self.options.repeats + baselines) * self._run_estimate() + self._confirmation_estimate()
        return None

    def _search_over(self) -> str | None:
        if len(self.store.requested) + len(self.store.failed) >= self.space.size():
            return f"every one of the {self.space.size()} points of the space was measured"
        if self.budget.trials is not None and self.store.trials_run() >= self.budget.trials:
            return f"trial budget of {self.budget.trials} reached"
        if self.budget.seconds is not None and \
                self.clock() + self._confirmation_estimate() + self._next_trial_estimate() >= self.budget.seconds:
            return "time budget reached (keeping time for the confirmation round)"
        return None

    # ---- measuring ----

    def _measure(self, doc: dict, label: str) -> Measurement:
        m = self.evaluator.evaluate(doc, label)
        if m.ok:
            self._durations.append(m.duration_s)
        if self.eval_log:
            with open(self.eval_log, "a") as f:
                f.write(json.dumps({"label": label, "ok": m.ok, "value": m.value, "at_s": round(self.clock(), 3)})
                        + "\n")
        self.store.set_clock(self.clock())
        return m

    def _signature(self, m: Measurement, doc: dict) -> str:
        effective = m.effective if m.effective is not None else requested(doc)
        return signature(effective, self.store.reference or {}, self.options.nodes)

    def default_value(self) -> float | None:
        values = [r["value"] for r in self.store.baseline_runs()]
        return statistics.median(values) if values else None

    def _baseline(self, reason: str) -> Measurement:
        n = len(self.store.baseline_runs())
        m = self._measure(self.baseline, f"baseline-{n:03d}")
        if m.ok:
            if self.store.reference is None:
                self.store.set_reference(reference_of(m))
            self.store.add_baseline_run(m.value, self.clock(), self._signature(m, self.baseline))
        self.progress({"kind": "baseline", "value": m.value, "error": m.error, "default": self.default_value(),
                       "reason": reason, "clock": self.clock()})
        return m

    def _value_of(self, sig: str) -> float | None:
        """The current result of an effective configuration: the median of all its runs."""
        if sig in self.store.default_signatures():
            return self.default_value()
        pool = self.store.pools.get(sig)
        return noise.median(pool.samples) if pool and pool.samples else None

    # ---- the search ----

    def best(self) -> tuple[int, float] | None:
        """(first trial, current value) of the best effective configuration measured so far."""
        pools = [p for p in self.store.pools.values() if p.samples]
        if not pools:
            return None
        top = max(pools, key=lambda p: self.objective.key(noise.median(p.samples)))
        return top.first_trial, noise.median(top.samples)

    def run(self) -> Outcome:
        self._measure_default()
        stopped = self._search()
        outcome = self._confirm(stopped)
        self.store.set_clock(self.clock())
        return outcome

    def _measure_default(self) -> None:
        """The default's first runs (as many as a trial's). A run that fails is tried again, a bounded
        number of times; with no run at all there is nothing to tune."""
        wanted = max(1, self.options.repeats)
        attempts = 0
        while len(self.store.baseline_runs()) < wanted:
            if attempts >= 2 * wanted:
                self.note(f"only {len(self.store.baseline_runs())} of {wanted} runs of the default settings "
                          f"succeeded in {attempts} attempts; the default is the median of those")
                return
            m = self._baseline("start")
            attempts += 1
            if not m.ok and not self.store.baseline_runs():
                raise TuneError(f"the application fails with its default settings, so there is nothing to tune: "
                                f"{m.error}")

    def _search(self) -> str:
        reproposals = 0
        while True:
            reason = self._search_over()
            if reason:
                return reason
            if self.options.baseline_every and self._since_baseline >= self.options.baseline_every:
                self._baseline("interleaved")
                self._since_baseline = 0
                continue
            trial = self.store.study.ask()
            params = {d.name: trial.suggest_categorical(d.name, d.labels) for d in self.space.dimensions}
            flat = complete(self.space.point_settings(self.space.decode(params)), self.options.nodes)
            key = canonical(flat)
            trial.set_user_attr("settings", flat)
            if self._reuse(trial, key):
                reproposals += 1
                if reproposals >= MAX_REPROPOSALS:
                    return f"the strategy proposed only measured points {MAX_REPROPOSALS} times in a row"
                continue
            reproposals = 0
            self._evaluate_trial(trial, flat, key)
            self._since_baseline += 1

    def _reuse(self, trial, key: str) -> bool:
        """A point measured before costs no run: it shares that result, or that failure. It is
        placed on the tuning clock when it was proposed."""
        if key in self.store.failed:
            first = self.store.failed[key]
            trial.set_user_attr("error", f"same settings as trial {first}, which failed")
            state, value = TrialState.FAIL, None
        elif key in self.store.requested:
            first, sig = self.store.requested[key]
            trial.set_user_attr("signature", sig)
            state, value = TrialState.COMPLETE, self._value_of(sig)
        else:
            return False
        trial.set_user_attr("duplicate_of", first)
        trial.set_user_attr("cost_runs", 0)
        trial.set_user_attr("duration_s", 0.0)
        trial.set_user_attr("at_s", self.clock())
        self.store.study.tell(trial, value, state=state)
        return True

    def _evaluate_trial(self, trial, flat: dict, key: str) -> None:
        doc = trial_doc(self.baseline, flat)
        runs: list[float] = []
        duplicate_of: int | str | None = None
        start = self.clock()
        first = self._measure(doc, f"t{trial.number:04d}-r1")
        attempted = 1
        error = first.error
        sig = None
        if first.ok:
            runs.append(first.value)
            sig = self._signature(first, doc)
            pool = self.store.pools.get(sig)
            if sig in self.store.default_signatures():  # took effect as the default: a run of the default
                duplicate_of = SAME_AS_DEFAULT
                self.store.add_baseline_run(first.value, self.clock(), sig, trial=trial.number)
            elif pool is not None:  # the same settings took effect before: one result for both
                duplicate_of = pool.first_trial
                pool.samples.append(first.value)
            else:
                for r in range(2, self.options.repeats + 1):
                    m = self._measure(doc, f"t{trial.number:04d}-r{r}")
                    attempted += 1
                    if not m.ok:
                        error = f"run {r} of {self.options.repeats} failed: {m.error}"
                        break
                    runs.append(m.value)
                else:
                    self.store.pools[sig] = Pool(sig, list(runs), trial.number, flat)
        trial.set_user_attr("runs", runs)
        trial.set_user_attr("cost_runs", attempted)
        trial.set_user_attr("duration_s", self.clock() - start)
        trial.set_user_attr("at_s", self.clock())
        event = {"kind": "trial", "number": trial.number, "settings": flat, "clock": self.clock()}
        if error is not None:
            trial.set_user_attr("error", error)
            self.store.study.tell(trial, state=TrialState.FAIL)
            self.store.failed[key] = trial.number
            event.update(error=error)
        else:
            value = self._value_of(sig)
            trial.set_user_attr("signature", sig)
            if duplicate_of is not None:
                trial.set_user_attr("duplicate_of", duplicate_of)
            self.store.study.tell(trial, value)
            self.store.requested[key] = (trial.number, sig)
            event.update(value=value, duplicate_of=duplicate_of, runs=runs)
        best = self.best()
        default = self.default_value()
        event.update(best=best[1] if best else None, default=default,
                     gain=self.objective.gain(best[1], default) if best and default else None,
                     done=self.store.trials_run(), budget=self.budget.trials, left_s=self.time_left())
        self.progress(event)

    # ---- confirmation ----

    def _candidates(self) -> list[Pool]:
        default = self.store.default_signatures()
        pools = [p for p in self.store.pools.values() if p.samples and p.signature not in default]
        pools.sort(key=lambda p: self.objective.key(noise.median(p.samples)), reverse=True)
        return pools[: self.options.confirm_top]

    def _rounds(self, k: int, done: int) -> int:
        """The confirmation rounds to run for k candidates (done: those run already), saying so when
        they differ from those asked for."""
        planned, needed = self.confirmation_rounds(k)
        rounds = planned
        if self.budget.seconds is not None:
            affordable = done + int(max(0.0, self.budget.seconds - self.clock()) // ((k + 1) * self._run_estimate()))
            rounds = max(self.options.confirm_rounds, min(planned, affordable))
        smallest = noise.smallest_p(self.options.confirm_rounds)
        if rounds < needed:
            self.note(f"the time budget leaves room for {rounds} confirmation rounds, but with {k} candidate(s) a "
                      f"gain needs at least {needed} (with {rounds} the smallest possible p is "
                      f"{noise.smallest_p(rounds):.3g}, and {self.options.alpha / k:.3g} is needed): no gain can "
                      f"be declared. Give more --time, or fewer --confirm-top")
        elif rounds > self.options.confirm_rounds:
            self.note(f"{rounds} confirmation rounds instead of {self.options.confirm_rounds}: with "
                      f"{self.options.confirm_rounds} and {k} candidate(s) the smallest possible p is {smallest:.3g}, "
                      f"and a gain needs p < {self.options.alpha / k:.3g}")
        return rounds

    def _confirm(self, stopped: str) -> Outcome:
        record = self.store.confirmation()
        trials_run = self.store.trials_run()
        if record is not None and record.get("trials_run") != trials_run:
            self.note(f"the search ran {trials_run - record.get('trials_run', 0)} more trial(s) since the last "
                      f"confirmation round: confirming again")
            self.store.supersede_confirmation()
            record = None
        if record is None:
            candidates = self._candidates()
            record = {"candidates": [{"signature": p.signature, "settings": p.settings, "trial": p.first_trial}
                                     for p in candidates],
                      "default": [], "samples": {p.signature: [] for p in candidates}, "rounds_done": 0,
                      "trials_run": trials_run}
            self.store.set_confirmation(record)
        cands = record["candidates"]
        default = self.default_value()
        if not cands:
            return Outcome(default, self._best_doc(None, None), None, None, stopped,
                           self.notes + ["no configuration took effect differently from the default settings"])
        rounds = self._rounds(len(cands), record["rounds_done"])
        for rnd in range(record["rounds_done"], rounds):
            entries = [None] + cands
            shift = rnd % len(entries)
            for entry in entries[shift:] + entries[:shift]:  # rotated, so no one always runs first
                if entry is None:
                    m = self._measure(self.baseline, f"confirm-{rnd}-default")
                    if m.ok:
                        record["default"].append(m.value)
                else:
                    m = self._measure(trial_doc(self.baseline, entry["settings"]), f"confirm-{rnd}-t{entry['trial']:04d}")
                    if m.ok:
                        record["samples"][entry["signature"]].append(m.value)
                self.progress({"kind": "confirm", "round": rnd + 1, "rounds": rounds,
                               "trial": entry and entry["trial"], "value": m.value, "error": m.error,
                               "clock": self.clock()})
            record["rounds_done"] = rnd + 1
            self.store.set_confirmation(record)
        measured = [c for c in cands if record["samples"][c["signature"]]]
        if not measured or not record["default"]:
            return Outcome(default, self._best_doc(None, None), None, None, stopped,
                           self.notes + ["the confirmation runs failed; keeping the default settings"])
        winner = max(measured, key=lambda c: self.objective.key(noise.median(record["samples"][c["signature"]])))
        verdict = noise.compare(record["samples"][winner["signature"]], record["default"], self.objective,
                                self.options.alpha, comparisons=len(measured))
        record["verdict"] = {"trial": winner["trial"], "gain": verdict.gain, "p_value": verdict.p_value,
                             "noise": verdict.noise, "significant": verdict.significant}
        self.store.set_confirmation(record)
        win = {**winner, "median": noise.median(record["samples"][winner["signature"]])}
        return Outcome(default, self._best_doc(win, verdict), verdict, win, stopped, list(self.notes),
                       noise.median(record["default"]))

    def _best_doc(self, winner: dict | None, verdict: noise.Verdict | None) -> dict:
        name = self.store.study.study_name
        if winner is None or verdict is None or not verdict.significant:
            doc = dict(self.baseline)
            doc["description"] = (f"iotuner tune, study {name}: no configuration beat the default settings beyond "
                                  f"the measured noise, so these are the default settings")
            doc["meta"] = {"tool": "iotuner tune", "study": name, "significant": False,
                           "objective": self.objective.name}
            return settings.validate(doc)
        meta = {"tool": "iotuner tune", "study": name, "trial": winner["trial"], "objective": self.objective.name,
                "unit": self.objective.unit, "value": winner["median"], "gain": verdict.gain,
                "p_value": verdict.p_value, "significant": True}
        doc = trial_doc(self.baseline, winner["settings"], meta)
        doc["description"] = (f"iotuner tune, study {name}: trial {winner['trial']}, {verdict.gain:.2f}x the "
                              f"default {self.objective.name}")
        return settings.validate(doc)
