"""Stop rules: when the search ends, and why.

The tuner asks each rule before every trial; the first that gives a reason
ends the search, and its name and reason go to summary.json and the
printout. A rule is a small object with a `name` and `check(state)`; the
early stoppers (TunIO's learned one, the heuristic, the production-runs one)
are in `stoppers`, one chosen per study (--stop).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

MAX_REPROPOSALS = 50  # consecutive proposals of measured points before calling the space exhausted


@dataclass(frozen=True)
class Stop:
    rule: str
    reason: str

    def to_json(self) -> dict:
        return {"rule": self.rule, "reason": self.reason}


class SearchState(Protocol):
    """What the rules see (the tuner provides it)."""
    store: object
    budget: object
    strategy: object
    space: object
    reproposals: int

    def clock(self) -> float: ...
    def next_trial_estimate(self) -> float: ...
    def confirmation_estimate(self) -> float: ...
    def context(self) -> object: ...


class StopRule(Protocol):
    name: str

    def check(self, state: SearchState) -> str | None: ...


class TrialBudget:
    """Trials that ran, and those other workers are running now: several workers overshoot the budget only by
    the trials started in the same instant (between one's look at the study and its new trial)."""
    name = "trial-budget"

    def check(self, state: SearchState) -> str | None:
        n = state.budget.trials
        if state.store.owed():  # a trial to run again is owed whatever the budget
            return None
        if n is not None and state.store.trials_run() + len(state.store.others_running()) >= n:
            return f"trial budget of {n} reached"
        return None


class TimeBudget:
    """A trial starts only if it, with its repeats and a baseline run when one is due, and the confirmation
    round still fit in the time budget."""
    name = "time-budget"

    def check(self, state: SearchState) -> str | None:
        s = state.budget.seconds
        if s is not None and state.clock() + state.confirmation_estimate() + state.next_trial_estimate() >= s:
            return "time budget reached (keeping time for the confirmation round)"
        return None


class Exhaustion:
    """Every point the strategy searches was measured (its subspace, or the whole space), or it keeps
    proposing measured points."""
    name = "exhaustion"

    def check(self, state: SearchState) -> str | None:
        size = state.strategy.searched_size()
        whole = size is None
        size = state.space.size() if whole else size
        if whole:
            measured = len(state.store.requested) + len(state.store.failed)
        else:
            keys = list(state.store.requested) + list(state.store.failed)
            measured = sum(1 for k in keys if state.strategy.searches(json.loads(k)))
        if measured >= size:
            return (f"every one of the {size} points of the space was measured" if whole else
                    f"every one of the {size} points the strategy searches was measured")
        if state.reproposals >= MAX_REPROPOSALS:
            return f"the strategy proposed only measured points {MAX_REPROPOSALS} times in a row"
        return None


class StrategyStop:
    """The strategy's own decision (a model that ran its top k, a learned stopper)."""
    name = "strategy"

    def check(self, state: SearchState) -> str | None:
        return state.strategy.stop(state.context())


def default_rules(config=None, strategy=None, objective=None) -> list[StopRule]:
    """The rules every study has, then its early stopper: the study's --stop, or the strategy's default."""
    rules: list[StopRule] = [Exhaustion(), TrialBudget(), TimeBudget(), StrategyStop()]
    if config is not None:
        from . import stoppers
        early = stoppers.make(config.stop or getattr(strategy, "default_stop", None), objective,
                              config.production_runs, config.production_runtime_s)
        if early is not None:
            rules.append(early)
    return rules


def first_stop(rules: list[StopRule], state: SearchState) -> Stop | None:
    for rule in rules:
        reason = rule.check(state)
        if reason:
            return Stop(rule.name, reason)
    return None
