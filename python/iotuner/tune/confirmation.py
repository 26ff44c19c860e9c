"""The confirmation round: the best configurations of the search and the default, run again side by side
(rotated, round after round), so that the verdict (`verdict.Verdicts`) compares runs made in the same time
window. Once for the study: the worker that gets the round's lease runs it, alone, the others wait for it; a
holder that dies loses the lease by its heartbeat, and one waiting worker runs the round again."""

from __future__ import annotations

import time
from typing import Any, Callable, cast

from . import noise
from . import stop as stops
from .runs import Progress, Runs
from .store import CONFIRMATION, DEFAULT, TRAINING, Lease, LeaseLost, Section, Store
from .study.leases import Held
from .trialdoc import trial_doc
from .tune_error import TuneError
from .verdict import ROUND, Outcome, Verdicts

POLL_S = 0.5  # how often the round's worker looks again at trials other workers still run
WAIT_S = 1.0  # how often a worker waiting for the confirmation round's verdict looks again


class Confirmation:
    """notes: the study's notes (an outcome carries them); note: how to add one and show it."""

    def __init__(
        self,
        store: Store,
        runs: Runs,
        verdicts: Verdicts,
        progress: Progress,
        notes: list[str],
        note: Callable[[str], None],
    ):
        self.store, self.runs, self.verdicts, self.progress = store, runs, verdicts, progress
        self.notes, self.note = notes, note
        c = store.config
        self.top, self.asked_rounds, self.alpha = c.confirm_top, c.confirm_rounds, c.alpha

    # ---- its size, for the time budget ----

    def rounds_for(self, candidates: int) -> tuple[int, int]:
        """(rounds planned, rounds needed): the rounds asked for, raised to the fewest with which
        a gain over this many candidates can be significant at all."""
        needed = noise.rounds_needed(candidates * noise.LOOKS, self.alpha)
        return max(self.asked_rounds, needed), needed

    def estimate(self, candidates: int | None = None) -> float:
        """What the round will cost in tuning time."""
        k = self.top if candidates is None else candidates
        return self.rounds_for(k)[0] * (k + 1) * self.store.results.run_estimate()

    def _affordable(self, k: int) -> int:
        """The rounds for k candidates the time budget still has room for."""
        per_round = (k + 1) * self.store.results.run_estimate()
        return int(max(0.0, cast(float, self.store.budget.seconds) - self.store.workers.clock()) // per_round)

    def _rounds(self, k: int, done: int) -> int:
        """The confirmation rounds to run for k candidates (done: those run already), saying so when
        they differ from those asked for."""
        planned, needed = self.rounds_for(k)
        rounds = planned
        if self.store.budget.seconds is not None:
            rounds = max(self.asked_rounds, min(planned, done + self._affordable(k)))
        if rounds < needed:
            self.note(
                f"the time budget leaves room for {rounds} confirmation rounds, but with {k} candidate(s) a "
                f"gain needs at least {needed} (with {rounds} the smallest possible p is "
                f"{noise.smallest_p(rounds):.3g}, and {self._level(k):.3g} is needed): no gain can "
                f"be declared. Give more --time, or fewer --confirm-top"
            )
        elif rounds > self.asked_rounds:
            self.note(
                f"{rounds} confirmation rounds instead of {self.asked_rounds}: with "
                f"{self.asked_rounds} and {k} candidate(s) the smallest possible p is "
                f"{noise.smallest_p(self.asked_rounds):.3g}, and a gain needs p < {self._level(k):.3g}"
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
        if self.store.budget.seconds is not None:
            more = min(more, self._affordable(len(cands)))
        if more:
            self.note(
                f"the confirmation is undecided after {rounds} rounds (p = {verdict.p_value:.3g}, "
                f"{verdict.gain:.2f}x the default with a noise of {verdict.noise:.0%}): {more} more rounds"
            )
        return more

    # ---- what it confirms ----

    def candidates(self) -> list[dict]:
        """The best configurations measured, best first, with how the log and trials.csv name them."""
        pools = self.store.results.ranked_pools()[: self.top]
        training = [r.id for r in self.store.trials.records(TRAINING)]
        out = []
        for p in pools:
            who: dict[str, Any]
            if p.first in training:  # a strategy's training run can be among the best
                n = training.index(p.first)
                who = {"trial": None, "name": f"training run {n}", "run": f"training-{n:03d}"}
            else:
                i = self.store.trials.index_of(cast(int, p.first))
                who = {"trial": i, "name": f"trial {i}", "run": f"t{i:04d}"}
            out.append({"signature": p.signature, "settings": p.settings, "record": p.first, **who})
        return out

    # ---- the round, under its lease ----

    def confirm(self, stop: stops.Stop, search: Callable[[], object]) -> Outcome:
        """The round's verdict, run by this worker if it gets the lease. search: runs the trials a stopped
        worker left owed, which come before the candidates."""
        if stop.rule == "tuner-io":
            return Outcome(
                self.store.results.default_value(),
                self.verdicts.best_doc(None, None),
                None,
                None,
                stop,
                self.notes + ["no confirmation round: the tuner cannot run the application any more"],
            )
        name = self._round_name()
        while True:
            try:
                with self.store.workers.exclusive(name, {"stop": stop.to_json()}, poll_s=WAIT_S) as section:
                    if section.mine:
                        self._hold(section, stop, search)
                lease = self.store.workers.lease(name)
                break
            except LeaseLost as e:
                self.note(f"{e}: this worker waits for the round's verdict instead")
        return self.verdicts.outcome(cast(Lease, lease), ran=section.mine)  # the section ended: its lease is done

    def _round_name(self) -> str:
        """The lease of the round to report: the last one, or a new one after a resume that searched more."""
        rounds = {
            int(n[len(ROUND) :]): lease
            for n, lease in self.store.workers.leases_named(ROUND).items()
            if n[len(ROUND) :].isdigit()
        }
        if not rounds:
            return f"{ROUND}0"
        k = max(rounds)
        last = rounds[k]
        if last.state == "done" and last.content.get("trials_run") != self.store.trials.trials_run():
            self.note("the search ran more trials since the last confirmation round: confirming again")
            return f"{ROUND}{k + 1}"
        return f"{ROUND}{k}"

    def _hold(self, section: Section, stop: stops.Stop, search: Callable[[], object]) -> None:
        held = cast(Held, section.held)  # the section is this worker's: it holds the lease
        if section.restarted:
            self.note(
                f"the worker that was running the confirmation round stopped (its lease expired): this "
                f"worker runs the round again, from the start (start {section.lease.attempt})"
            )
        # the round runs alone: trials other workers still run would disturb its runs (shared nodes)
        owed_run = False
        while True:
            self.store.workers.recover()
            if self.store.workers.others_running():
                time.sleep(POLL_S)
            elif self.store.trials.owed() and not owed_run:
                owed_run = True
                search()  # trials a stopped worker left, queued to run again: before the candidates
            else:
                break
            held.check()
        cands = self.candidates()
        trials_run = self.store.trials.trials_run()
        plan = f"{section.lease.name}/{section.lease.attempt}"
        content: dict[str, Any] = {"stop": stop.to_json(), "trials_run": trials_run, "plan": plan}
        if not cands:
            held.set(content={**content, "candidates": []})
            return
        rounds = self._rounds(len(cands), 0)
        held.set(content={**content, "candidates": cands, "rounds": rounds})
        self._run(plan, cands, 0, rounds, held)
        more = self._more_rounds(stop, plan, cands, rounds)
        if more:
            held.set(content={**content, "candidates": cands, "rounds": rounds + more})
            self._run(plan, cands, rounds, rounds + more, held)

    def _run(self, key: str, cands: list[dict], first: int, rounds: int, held: Held | None = None) -> None:
        """Rounds first..rounds-1 of the plan `key`: each candidate and the default once a round."""
        baseline = self.runs.baseline
        for rnd in range(first, rounds):
            entries = [None] + cands
            shift = rnd % len(entries)
            for entry in entries[shift:] + entries[:shift]:  # rotated, so no one always runs first
                if held is not None:
                    held.check()
                who = DEFAULT if entry is None else entry["signature"]
                flat = {} if entry is None else entry["settings"]
                doc = baseline if entry is None else trial_doc(baseline, flat)
                label = f"confirm-{rnd}-{'default' if entry is None else entry['run']}"
                m = self.runs.measure(doc, label)
                if m.fault:
                    raise TuneError(m.fault)
                self.runs.record(
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
                        "clock": self.store.workers.clock(),
                    }
                )
