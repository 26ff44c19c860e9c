"""One worker's tuning of a study: the search (`search.Search`: the default's runs, the strategy's
training, the trials, until a stop rule), then the confirmation round (`confirmation.Confirmation`: the best
against the default, side by side, under a lease), then its verdict (`verdict.Verdicts`: the winner and
best.json, judged from the records alone).

Every run becomes a record of the study (`store.Store`), which derives everything else. Several workers
(processes, machines) can run this on one study: the confirmation round and a strategy's training are
exclusive sections that one worker runs, under a lease, while the others wait; every worker then reports the
verdict of that one round.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from . import stop as stops
from .confirmation import Confirmation
from .evaluate import Evaluator
from .objective import Objective
from .protocol import Strategy
from .runs import Progress, Runs
from .search import Search
from .space import SearchSpace
from .store import Store
from .study.recovery import MAX_STARTS
from .tune_error import TuneError
from .verdict import Outcome, Verdicts

__all__ = ["Outcome", "Tuner"]


class Tuner:
    """The study as this worker tunes it: its search, its confirmation and its verdicts share the store, the
    runs (measure and record) and the notes."""

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
        self.store, self.evaluator, self.objective = store, evaluator, objective
        self.progress = progress or (lambda event: None)
        self.notes: list[str] = []
        self.verdicts = Verdicts(store, objective, self.notes, self.note)  # the same notes: an outcome carries them
        self.runs = Runs(store, evaluator, self.progress, self.note, lambda r, m: self.search.observe(r, m), eval_log)
        self.confirmation = Confirmation(store, self.runs, self.verdicts, self.progress, self.notes, self.note)
        self.search = Search(
            store,
            self.runs,
            space,
            objective,
            strategy or Strategy(space, store.config.seed, {}),
            self.progress,
            self.notes,
            self.note,
            self.confirmation.estimate,
            rules,
        )
        self.on_start: Callable[[Tuner], None] | None = None  # once the default is measured (the header)

    @property
    def strategy(self) -> Strategy:
        return self.search.strategy

    @property
    def space(self) -> SearchSpace:
        """The space searched: the study's, without the layers the program does not use (`Search.narrow`)."""
        return self.search.space

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
            self.progress({"kind": "note", "text": text, "clock": self.clock()})

    def clock(self) -> float:
        """Tuning time: how long the study has been worked on, across resumes and workers."""
        return self.store.workers.clock()

    def run(self, scratch: str | None = None) -> Outcome:
        self.store.workers.begin_session(scratch)
        self._recover()
        self.search.measure_default()  # first: signatures of every other run are relative to the default's settings
        self.search.narrow()
        if self.on_start is not None:
            self.on_start(self)
        self.search.prepare()
        stop = self.search.run()
        if stop.rule == stops.TimeBudget.name and stops.nothing_searched(self.store):  # no trial fits: say so
            raise TuneError(f"{stop.reason} (continue the study with --resume: it keeps the default's runs)")
        outcome = self.confirmation.confirm(stop, self.search.run)
        self.store.workers.touch_session()
        return outcome

    def _recover(self) -> None:
        """What stopped tuners left: their running trials, run again or given up, and their runs' files."""
        for number in self.store.workers.recover():
            if number in self.store.workers.given_up:
                self.note(
                    f"trial {number} was left running by a stopped tuner, its settings' start {MAX_STARTS} "
                    f"of {MAX_STARTS}: it is given up, not run again"
                )
            else:
                self.note(f"trial {number} was left running by a stopped tuner: it runs again")
        clean = getattr(self.evaluator, "clean_leftovers", None)
        if clean is not None:  # runs a killed tuner left in the scratch directory
            interrupted = [r.number for r in self.store.trials.search_trials() if r.interrupted]
            for left in clean(interrupted, everything=not self.store.workers.live_peers()):
                self.progress(
                    {"kind": "note", "text": f"removed {left}, left by an interrupted run", "clock": self.clock()}
                )
