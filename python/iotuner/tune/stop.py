"""Stop rules: when the search ends, and why.

The tuner asks each rule before every trial; the first that gives a reason
ends the search, and its name and reason go to summary.json and the
printout. A rule is a small object with a `name` and `check(state)`. The
early stoppers register here (`register_stopper`), as strategies do: the
engine's in `stoppers` (heuristic, production-runs, none), a strategy's in its
package (TunIO's learned one); a study uses one (--stop, else its strategy's
`default_stop`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

from .printout import fmt_time
from .study.records import TRAINING

if TYPE_CHECKING:
    from .protocol import Context, Strategy
    from .space import SearchSpace
    from .store import Store
    from .study_config import Budget

MAX_REPROPOSALS = 50  # consecutive proposals of measured points before calling the space exhausted


@dataclass(frozen=True)
class Stop:
    rule: str
    reason: str

    def to_json(self) -> dict:
        return {"rule": self.rule, "reason": self.reason}


class SearchState(Protocol):
    """What the rules see (the tuner provides it)."""

    @property
    def store(self) -> Store: ...
    @property
    def budget(self) -> Budget: ...
    @property
    def strategy(self) -> Strategy: ...
    @property
    def space(self) -> SearchSpace: ...
    @property
    def reproposals(self) -> int: ...
    @property
    def repeats(self) -> int: ...

    def clock(self) -> float: ...
    def run_estimate(self) -> float: ...
    def next_trial_runs(self) -> int: ...
    def next_trial_estimate(self) -> float: ...
    def confirmation_estimate(self) -> float: ...
    def context(self) -> Context: ...


class StopRule(Protocol):
    name: str

    def check(self, state: SearchState) -> str | None: ...


class TrialBudget:
    """Trials that ran, and those other workers are running now: several workers overshoot the budget only by
    the trials started in the same instant (between one's look at the study and its new trial)."""

    name = "trial-budget"

    def check(self, state: SearchState) -> str | None:
        n = state.budget.trials
        if state.store.trials.owed():  # a trial to run again is owed whatever the budget
            return None
        if n is not None and state.store.trials.trials_run() + len(state.store.workers.others_running()) >= n:
            return f"trial budget of {n} reached"
        return None


class RunBudget:
    """Application runs before the confirmation round (the default's, training and trials', with their
    repeats; those other workers are making now counted as made): a trial starts only if its runs fit."""

    name = "run-budget"

    def check(self, state: SearchState) -> str | None:
        n = state.budget.runs
        if n is None or state.store.trials.owed():
            return None
        spent = state.store.trials.runs_spent() + len(state.store.workers.others_running()) * state.repeats
        if spent + state.next_trial_runs() > n:
            return f"run budget of {n} application runs reached ({spent} made)"
        return None


class TimeBudget:
    """A trial starts only if it, with its repeats and a baseline run when one is due, and the confirmation
    round still fit in the time budget. Before the first trial, a budget with no room for one says so, with
    the budget that has (the tuner then refuses rather than report on trials that never ran)."""

    name = "time-budget"

    def check(self, state: SearchState) -> str | None:
        s = state.budget.seconds
        if s is None:
            return None
        spent, trial, confirm = state.clock(), state.next_trial_estimate(), state.confirmation_estimate()
        if spent + trial + confirm < s:
            return None
        if nothing_searched(state.store):
            return (
                f"the time budget of {fmt_time(s)} has no room for a single trial: the default's runs took "
                f"{fmt_time(spent)} (about {fmt_time(state.run_estimate())} a run), and a trial "
                f"({fmt_time(trial)}) with the confirmation round after it ({fmt_time(confirm)}) needs "
                f"{fmt_time(trial + confirm)} more; give --time {least_duration(spent + trial + confirm)} or more"
            )
        return "time budget reached (keeping time for the confirmation round)"


def nothing_searched(store: Store) -> bool:
    """No configuration but the default's was run, is running or is owed: no search trial, no training run."""
    t = store.trials
    return t.trials_run() == 0 and not store.workers.others_running() and not t.owed() and not t.records(TRAINING)


def least_duration(seconds: float) -> str:
    """A --time value of at least `seconds`, rounded up to 10 s, or to a minute beyond 90 s."""
    if seconds <= 90:
        return f"{math.ceil(seconds / 10) * 10}s"
    return f"{math.ceil(seconds / 60)}m"


class Exhaustion:
    """Every point the strategy searches was measured (its subspace, or the whole space), or it keeps
    proposing measured points."""

    name = "exhaustion"

    def check(self, state: SearchState) -> str | None:
        searched = state.strategy.searched_size()
        whole = searched is None
        size = state.space.size() if searched is None else searched
        if whole:
            measured = len(state.store.results.requested) + len(state.store.results.failed)
        else:
            keys = list(state.store.results.requested) + list(state.store.results.failed)
            measured = sum(1 for k in keys if state.strategy.searches(json.loads(k)))
        if measured >= size:
            return (
                f"every one of the {size} points of the space was measured"
                if whole
                else f"every one of the {size} points the strategy searches was measured"
            )
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
    rules: list[StopRule] = [Exhaustion(), TrialBudget(), RunBudget(), TimeBudget(), StrategyStop()]
    if config is not None:
        early = make_stopper(config.stop or getattr(strategy, "default_stop", None), objective, config)
        if early is not None:
            rules.append(early)
    return rules


# ---- early stoppers, registered like strategies ----

StopperFactory = Callable[[Any, Any], "StopRule | None"]  # (objective, study config) -> the rule, or None
_STOPPERS: dict[str, tuple[str, StopperFactory]] = {}


def register_stopper(name: str, description: str) -> Callable[[StopperFactory], StopperFactory]:
    """Makes a factory (objective, study config) -> stop rule (None: no rule) the early stopper `--stop name`."""

    def deco(factory: StopperFactory) -> StopperFactory:
        _STOPPERS[name] = (description, factory)
        return factory

    return deco


def stopper_names() -> list[str]:
    """The stoppers registered so far: the engine's and those of the strategies imported (`strategies.load()`
    imports them all)."""
    return sorted(_STOPPERS)


def stopper_descriptions() -> dict[str, str]:
    return {name: description for name, (description, _) in sorted(_STOPPERS.items())}


def make_stopper(choice: str | None, objective, config=None) -> StopRule | None:
    """The stop rule of a --stop choice (None: no early stopper); ValueError for an unknown one."""
    if choice is None:
        return None
    if choice not in _STOPPERS:
        raise ValueError(f"unknown stopper '{choice}': use {', '.join(stopper_names())}")
    return _STOPPERS[choice][1](objective, config)


def first_stop(rules: list[StopRule], state: SearchState) -> Stop | None:
    for rule in rules:
        reason = rule.check(state)
        if reason:
            return Stop(rule.name, reason)
    return None
