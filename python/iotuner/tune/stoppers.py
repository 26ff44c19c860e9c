"""The engine's early stoppers: end the search when more tuning no longer pays (paper 002, section III-D, and
the production-runs stopper it names as future work). A strategy brings its own (TunIO's learned stopper:
`strategies/tunio/stopper.py`); all register with `stop.register_stopper`, and a study picks one (--stop).

Each stopper is a stop rule (`stop.StopRule`: a name and `check(state)`) that
decides once per iteration (a generation of a genetic algorithm, or one trial
for other strategies: `Strategy.iteration_trials`), from the study's
iterations (`trajectory.iterations`) alone, so a resumed study or another
worker decides the same. The decision itself is a pure function of the
iterations (`decide`), which the benchmark applies to recorded trajectories.

- `heuristic`: the paper's baseline, after Golovin et al.: less than 5% gain
  over the last 5 iterations.
- `production-runs`: with N production runs planned, stops when the gain the
  next iteration is expected to bring (from a logarithmic fit of the
  incumbent against the iteration) could not pay back that iteration's tuning
  time within N runs: its own viability point is beyond N.
- `none`: no early stopper.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..lazy import lazy
from . import stop
from . import trajectory as traj
from .objective import Objective
from .study.records import BASELINE

np = lazy("numpy")

HEURISTIC_GAIN, HEURISTIC_WINDOW = 0.05, 5

# ---- the decisions, pure functions of the iterations ----


def heuristic(
    its: Sequence[traj.Iteration], objective: Objective, gain: float = HEURISTIC_GAIN, window: int = HEURISTIC_WINDOW
) -> str | None:
    if len(its) <= window:
        return None
    g = objective.gain(its[-1].incumbent, its[-1 - window].incumbent) - 1
    if g >= gain:
        return None
    return (
        f"heuristic stopper: {g:+.1%} over the last {window} iterations, less than {gain:.0%} "
        f"(iteration {its[-1].number})"
    )


def expected_next(its: Sequence[traj.Iteration], objective: Objective) -> float:
    """The improvement the next iteration is expected to bring, in the objective's unit (higher is better):
    the incumbent fitted as a + b log(1 + iteration) over all iterations, extrapolated one iteration."""
    x = np.log1p([it.number for it in its])
    y = np.array([objective.key(it.incumbent) for it in its])
    if len(its) < 2 or np.ptp(x) == 0:
        return 0.0
    b = float(np.polyfit(x, y, 1)[0])
    n = its[-1].number
    return max(0.0, b * (math.log1p(n + 1) - math.log1p(n)))


def production_runs(
    its: Sequence[traj.Iteration], objective: Objective, runs: int, prod: traj.Production, min_iterations: int = 3
) -> str | None:
    """Stops when the next iteration, at its expected gain, could not pay back its own tuning time within the
    planned production runs (its viability point is beyond them)."""
    if len(its) <= min_iterations or not prod.runtime_s:
        return None
    last, default = its[-1], its[-1].default
    window = its[-min(len(its) - 1, HEURISTIC_WINDOW) - 1 :]
    cost = (window[-1].at_s - window[0].at_s) / (len(window) - 1)  # tuning time per iteration, lately
    step = expected_next(its, objective)
    nxt = last.incumbent + step if objective.direction == "maximize" else last.incumbent - step
    now_io = traj.io_time_per_run(prod, objective, last.incumbent, default)
    saved = now_io - traj.io_time_per_run(prod, objective, nxt, default) if step > 0 else 0.0
    pays_after = math.ceil(cost / saved) if saved > 0 else None
    if pays_after is not None and pays_after <= runs:
        return None
    unit = f" {objective.unit}" if objective.unit else ""
    so_far = traj.viability(last.at_s, objective.gain(last.incumbent, default), prod.runtime_s, prod.io_share)
    paid = (
        f"the tuning so far pays back after {so_far.runs} run(s)"
        if so_far.runs
        else "the tuning so far has not found a gain"
    )
    expected = (
        f"the next iteration (~{cost:.3g} s) is expected to gain {step:.3g}{unit}, saving "
        f"{saved:.3g} s per production run: it pays back only after {pays_after} runs"
        if pays_after
        else f"the next iteration (~{cost:.3g} s) is not expected to gain anything"
    )
    return f"production-runs stopper: {expected}, more than the {runs} planned; {paid}"


# ---- stop rules ----


def iteration_trials(strategy) -> int:
    size = getattr(strategy, "iteration_trials", None)
    return max(1, int(size())) if callable(size) else 1


class IterationRule:
    """Decides once per completed iteration, from the study's iterations."""

    name = ""

    def __init__(self, objective: Objective):
        self.objective = objective

    def check(self, state) -> str | None:
        its = traj.iterations(state.store.results.trajectory, iteration_trials(state.strategy), self.objective)
        return self.decide(its, state) if its else None

    def decide(self, its: list[traj.Iteration], state) -> str | None:
        raise NotImplementedError


class Heuristic(IterationRule):
    name = "heuristic-stopper"

    def decide(self, its, state):
        return heuristic(its, self.objective)


class ProductionRuns(IterationRule):
    name = "production-runs-stopper"

    def __init__(self, objective: Objective, runs: int, runtime_s: float | None):
        super().__init__(objective)
        self.runs, self.runtime_s = runs, runtime_s

    def decide(self, its, state):
        whole = self.objective.pattern is not None  # read from the output: the whole run is its clock
        prod = traj.production(state.store.trials.records(BASELINE), self.runtime_s, whole)
        return production_runs(its, self.objective, self.runs, prod)


@stop.register_stopper("heuristic", "less than 5% gain over 5 iterations (Golovin et al.)")
def _heuristic(objective: Objective, config) -> Heuristic:
    return Heuristic(objective)


@stop.register_stopper(
    "production-runs", "stops when more tuning could not pay for itself within the planned --production-runs"
)
def _production_runs(objective: Objective, config) -> ProductionRuns:
    runs = getattr(config, "production_runs", None)
    if not runs or runs < 1:
        raise ValueError("--stop production-runs needs --production-runs N (the production runs planned)")
    return ProductionRuns(objective, runs, getattr(config, "production_runtime_s", None))


@stop.register_stopper("none", "no early stopper: the budget and the strategy end the search")
def _none(objective: Objective, config) -> None:
    return None
