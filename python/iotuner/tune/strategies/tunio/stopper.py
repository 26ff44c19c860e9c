"""TunIO's learned stopper (paper 002, section III-D): registered as the early stopper `learned`.

Its state is the iteration, the gain of the iteration (as a share of the
average gain per iteration so far) and the iterations since the last gain; a
Q-table trained offline on synthetic logarithmic tuning curves with random
downward shifts (`pretrain.train_stopper`) says whether continuing is
expected to raise the return on tuning investment; it stops when it is not.
The decision is a pure function of the iterations (`learned`), which the
benchmark applies to recorded trajectories.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ....lazy import lazy
from ... import stop
from ... import trajectory as traj
from ...objective import Objective
from ...stoppers import IterationRule
from . import policy_file
from .policy_file import PolicyError

np = lazy("numpy")

POLICY_FILE = Path(__file__).with_name("data") / "tunio-stopper.json"

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
        out.append(
            (_bucket(i, ITERATION_EDGES) * (len(RATIO_EDGES) + 1) + _bucket(ratio, RATIO_EDGES))
            * (len(SINCE_EDGES) + 1)
            + _bucket(since, SINCE_EDGES)
        )
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
        return {
            "format": "iotuner-tunio-stopper",
            "version": 1,
            "states": STATES,
            "state": {
                "iteration_edges": ITERATION_EDGES,
                "ratio_edges": RATIO_EDGES,
                "since_edges": SINCE_EDGES,
                "gain_step": GAIN_STEP,
            },
            "q_continue": [round(q, 5) for q in self.q_continue],
            "visits": list(self.visits),
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, doc: dict, where: str = "stopper policy") -> StopperPolicy:
        if not isinstance(doc, dict) or doc.get("format") != "iotuner-tunio-stopper" or doc.get("version") != 1:
            raise PolicyError(f"{where} is not an iotuner TunIO stopper policy (version 1)")
        s = doc.get("state", {})
        if (
            doc.get("states") != STATES
            or tuple(s.get("iteration_edges", ())) != ITERATION_EDGES
            or tuple(s.get("ratio_edges", ())) != RATIO_EDGES
            or tuple(s.get("since_edges", ())) != SINCE_EDGES
        ):
            raise PolicyError(
                f"{where} was trained on another state encoding: regenerate it with bench/tunio_pretrain.py stopper"
            )
        q = doc.get("q_continue")
        if not isinstance(q, list) or len(q) != STATES:
            raise PolicyError(f"{where} has no Q-value per state")
        return cls(
            tuple(float(x) for x in q),
            tuple(int(x) for x in doc.get("visits", [0] * STATES)),
            dict(doc.get("meta", {})),
        )

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")


@lru_cache(maxsize=4)
def load_policy(path: str | Path = POLICY_FILE) -> StopperPolicy:
    return StopperPolicy.from_json(policy_file.read(path, "stopper policy"), str(path))


# ---- the decision, a pure function of the iterations ----


def learned(its: Sequence[traj.Iteration], objective: Objective, policy: StopperPolicy) -> str | None:
    if len(its) < 2:
        return None
    s = states([it.incumbent for it in its], objective)[-1]
    if policy.continues(s):
        return None
    gain = objective.gain(its[-1].incumbent, its[0].incumbent)
    return (
        f"learned stopper: after iteration {its[-1].number} ({gain:.2f}x the default so far, "
        f"{_since_gain(its, objective)} iteration(s) since the last gain of {GAIN_STEP:.0%}), more tuning is "
        f"not expected to raise the return on tuning investment"
    )


def _since_gain(its: Sequence[traj.Iteration], objective: Objective) -> int:
    n = 0
    for a, b in zip(reversed(its[:-1]), reversed(its[1:])):
        if objective.gain(b.incumbent, a.incumbent) - 1 >= GAIN_STEP:
            break
        n += 1
    return n


class Learned(IterationRule):
    name = "learned-stopper"

    def __init__(self, objective: Objective, policy: StopperPolicy | None = None):
        super().__init__(objective)
        self.policy = policy or load_policy()

    def decide(self, its, state):
        return learned(its, self.objective, self.policy)


@stop.register_stopper(
    "learned",
    "TunIO's, trained on tuning curves: stops when more tuning is not expected to "
    "raise the return on tuning investment",
)
def _learned(objective: Objective, config) -> Learned:
    return Learned(objective)
