"""Early stopping: end the search when more tuning no longer pays (paper 002,
section III-D, and the production-runs stopper it names as future work).

Each stopper is a stop rule (`stop.StopRule`: a name and `check(state)`) that
decides once per iteration (a generation of a genetic algorithm, or one trial
for other strategies: `Strategy.iteration_trials`), from the study's
iterations (`trajectory.iterations`) alone, so a resumed study or another
worker decides the same. The decision itself is a pure function of the
iterations (`decide`), which the benchmark applies to recorded trajectories.

- `learned`: TunIO's stopper. Its state is the iteration, the gain of the
  iteration (as a share of the average gain per iteration so far) and the
  iterations since the last gain; a Q-table trained offline on synthetic
  logarithmic tuning curves with random downward shifts
  (`pretrain.train_stopper`) says whether continuing is expected to raise
  the return on tuning investment; it stops when it is not.
- `heuristic`: the paper's baseline, after Golovin et al.: less than 5% gain
  over the last 5 iterations.
- `production-runs`: with N production runs planned, stops when the gain the
  next iteration is expected to bring (from a logarithmic fit of the
  incumbent against the iteration) could not pay back that iteration's tuning
  time within N runs: its own viability point is beyond N.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ..lazy import lazy
from . import policy_file, trajectory as traj
from .policy_file import PolicyError
from .config import STOPPERS
from .objective import Objective

np = lazy("numpy")

POLICY_FILE = Path(__file__).with_name("data") / "tunio-stopper.json"
HEURISTIC_GAIN, HEURISTIC_WINDOW = 0.05, 5

# the learned stopper's state: buckets of the iteration, of the iteration's gain over the average gain per
# iteration so far, and of the iterations since the last gain of at least GAIN_STEP
ITERATION_EDGES = (2, 3, 4, 5, 7, 10, 15, 25)  # 1 | 2 | 3 | 4 | 5-6 | 7-9 | 10-14 | 15-24 | 25+
RATIO_EDGES = (0.02, 0.25, 0.5, 1.0, 2.0)  # none | <1/4 | <1/2 | <1 | <2 | 2+ times the average
SINCE_EDGES = (1, 2, 3, 5, 8)  # 0 | 1 | 2 | 3-4 | 5-7 | 8+
GAIN_STEP = 0.01
STATES = (len(ITERATION_EDGES) + 1) * (len(RATIO_EDGES) + 1) * (len(SINCE_EDGES) + 1)


def _bucket(x: float, edges: Sequence[float]) -> int:
    return int(np.searchsorted(edges, x, side="right"))


def states(values: Sequence[float], objective: Objective | None = None) -> list[int]:
    """The learned stopper's state after each iteration 1..n, from the incumbent after each iteration
    (`values`, from iteration 0, the default, on). A function of the inputs the paper names (the iteration
    and the gain of each iteration) only."""
    key = objective.key if objective else (lambda v: v)
    k = [key(v) for v in values]
    out, since = [], 0
    for i in range(1, len(k)):
        total, step = k[i] - k[0], k[i] - k[i - 1]
        ratio = step / (total / i) if total > 0 else 0.0
        since = 0 if abs(k[i - 1]) > 0 and step / abs(k[i - 1]) >= GAIN_STEP else since + 1
        out.append((_bucket(i, ITERATION_EDGES) * (len(RATIO_EDGES) + 1) + _bucket(ratio, RATIO_EDGES))
                   * (len(SINCE_EDGES) + 1) + _bucket(since, SINCE_EDGES))
    return out


@dataclass(frozen=True)
class StopperPolicy:
    """Q(state, continue): the return on tuning investment that continuing is expected to add (as a share of
    the best return in hindsight); stopping is worth 0."""
    q_continue: tuple[float, ...]
    visits: tuple[int, ...]
    meta: dict

    def continues(self, s: int) -> bool:
        return self.q_continue[s] > 0

    def to_json(self) -> dict:
        return {"format": "iotuner-tunio-stopper", "version": 1, "states": STATES,
                "state": {"iteration_edges": ITERATION_EDGES, "ratio_edges": RATIO_EDGES,
                          "since_edges": SINCE_EDGES, "gain_step": GAIN_STEP},
                "q_continue": [round(q, 5) for q in self.q_continue], "visits": list(self.visits), "meta": self.meta}

    @classmethod
    def from_json(cls, doc: dict, where: str = "stopper policy") -> "StopperPolicy":
        if not isinstance(doc, dict) or doc.get("format") != "iotuner-tunio-stopper" or doc.get("version") != 1:
            raise PolicyError(f"{where} is not an iotuner TunIO stopper policy (version 1)")
        s = doc.get("state", {})
        if (doc.get("states") != STATES or tuple(s.get("iteration_edges", ())) != ITERATION_EDGES
                or tuple(s.get("ratio_edges", ())) != RATIO_EDGES or tuple(s.get("since_edges", ())) != SINCE_EDGES):
            raise PolicyError(f"{where} was trained on another state encoding: regenerate it with "
                              f"bench/tunio_pretrain.py stopper")
        q = doc.get("q_continue")
        if not isinstance(q, list) or len(q) != STATES:
            raise PolicyError(f"{where} has no Q-value per state")
        return cls(tuple(float(x) for x in q), tuple(int(x) for x in doc.get("visits", [0] * STATES)),
                   dict(doc.get("meta", {})))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")


@lru_cache(maxsize=4)
def load_policy(path: str | Path = POLICY_FILE) -> StopperPolicy:
    return StopperPolicy.from_json(policy_file.read(path, "stopper policy"), str(path))


# ---- the decisions, pure functions of the iterations ----

def learned(its: Sequence[traj.Iteration], objective: Objective, policy: StopperPolicy) -> str | None:
    if len(its) < 2:
        return None
    s = states([it.incumbent for it in its], objective)[-1]
    if policy.continues(s):
        return None
    gain = objective.gain(its[-1].incumbent, its[0].incumbent)
    return (f"learned stopper: after iteration {its[-1].number} ({gain:.2f}x the default so far, "
            f"{_since_gain(its, objective)} iteration(s) since the last gain of {GAIN_STEP:.0%}), more tuning is "
            f"not expected to raise the return on tuning investment")


def _since_gain(its: Sequence[traj.Iteration], objective: Objective) -> int:
    n = 0
    for a, b in zip(reversed(its[:-1]), reversed(its[1:])):
        if objective.gain(b.incumbent, a.incumbent) - 1 >= GAIN_STEP:
            break
        n += 1
    return n


def heuristic(its: Sequence[traj.Iteration], objective: Objective, gain: float = HEURISTIC_GAIN,
              window: int = HEURISTIC_WINDOW) -> str | None:
    if len(its) <= window:
        return None
    g = objective.gain(its[-1].incumbent, its[-1 - window].incumbent) - 1
    if g >= gain:
        return None
    return (f"heuristic stopper: {g:+.1%} over the last {window} iterations, less than {gain:.0%} "
            f"(iteration {its[-1].number})")


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


def production_runs(its: Sequence[traj.Iteration], objective: Objective, runs: int, prod: traj.Production,
                    min_iterations: int = 3) -> str | None:
    """Stops when the next iteration, at its expected gain, could not pay back its own tuning time within the
    planned production runs (its viability point is beyond them)."""
    if len(its) <= min_iterations or not prod.runtime_s:
        return None
    last, default = its[-1], its[-1].default
    window = its[-min(len(its) - 1, HEURISTIC_WINDOW) - 1:]
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
    paid = f"the tuning so far pays back after {so_far.runs} run(s)" if so_far.runs else \
        "the tuning so far has not found a gain"
    expected = (f"the next iteration (~{cost:.3g} s) is expected to gain {step:.3g}{unit}, saving "
                f"{saved:.3g} s per production run: it pays back only after {pays_after} runs"
                if pays_after else f"the next iteration (~{cost:.3g} s) is not expected to gain anything")
    return f"production-runs stopper: {expected}, more than the {runs} planned; {paid}"


# ---- stop rules ----

def iteration_trials(strategy) -> int:
    size = getattr(strategy, "iteration_trials", None)
    return max(1, int(size())) if callable(size) else 1


class _IterationRule:
    """Decides once per completed iteration, from the study's iterations."""
    name = ""

    def __init__(self, objective: Objective):
        self.objective = objective

    def check(self, state) -> str | None:
        its = traj.iterations(state.store.trajectory, iteration_trials(state.strategy), self.objective)
        return self.decide(its, state) if its else None

    def decide(self, its: list[traj.Iteration], state) -> str | None:
        raise NotImplementedError


class Learned(_IterationRule):
    name = "learned-stopper"

    def __init__(self, objective: Objective, policy: StopperPolicy | None = None):
        super().__init__(objective)
        self.policy = policy or load_policy()

    def decide(self, its, state):
        return learned(its, self.objective, self.policy)


class Heuristic(_IterationRule):
    name = "heuristic-stopper"

    def decide(self, its, state):
        return heuristic(its, self.objective)


class ProductionRuns(_IterationRule):
    name = "production-runs-stopper"

    def __init__(self, objective: Objective, runs: int, runtime_s: float | None):
        super().__init__(objective)
        self.runs, self.runtime_s = runs, runtime_s

    def decide(self, its, state):
        prod = traj.production(state.store.records(), self.runtime_s)
        return production_runs(its, self.objective, self.runs, prod)


def make(choice: str | None, objective: Objective, production_runs: int | None = None,
         production_runtime_s: float | None = None):
    """The stop rule of a --stop choice (None or "none": no early stopper)."""
    if choice in (None, "none"):
        return None
    if choice == "learned":
        return Learned(objective)
    if choice == "heuristic":
        return Heuristic(objective)
    if choice == "production-runs":
        if not production_runs or production_runs < 1:
            raise ValueError("--stop production-runs needs --production-runs N (the production runs planned)")
        return ProductionRuns(objective, production_runs, production_runtime_s)
    raise ValueError(f"unknown stopper '{choice}': use {', '.join(STOPPERS)}")
