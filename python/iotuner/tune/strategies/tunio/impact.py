"""Impact-first parameter subsets: TunIO's smart configuration generation
(paper 002, section III-C).

Before every generation of the genetic algorithm, the picker chooses which
dimensions it may vary; the others stay at the best configuration so far.

- The **state observer** is a linear contextual bandit (LinUCB) whose arms are
  the dimensions. Each dimension's context says how performance varies with
  it, as far as the study has seen: its prior impact (PCA of the pretraining
  sweeps, by knob), the headroom of its best value seen over the incumbent's
  value and the range of its main effect (a ridge regression of log
  performance on the one-hot encoded points measured so far), and how much of
  it is still unexplored.
  The bandit predicts the gain that tuning the dimension now brings; it is
  rewarded, after each generation, with the gain the generation made through
  that dimension.
- The **subset picker** is a Q-table over a small state (the generation, the
  recent progress, how concentrated the predicted impact is) whose actions are
  subset sizes; the subset is the observer's top dimensions (upper confidence
  bounds). Its reward per generation is the gain made, normalized by the
  gain so far, minus the picked share of the dimensions (the paper's
  norm_perf - norm_param), credited with a five-generation delay (n-step
  Q-learning).
- Dimensions whose knobs never took effect unlike the default (a knob the
  system drops) are inert: never picked while others are left.

Both are pretrained offline (`pretrain.train_picker`) and keep learning
online, within a study. `FanovaPicker` is the non-learned ablation: the
dimensions Optuna's fANOVA finds most important so far.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ....lazy import lazy
from ..ga.operators import crossover, tournament
from . import policy_file
from .policy_file import PolicyError

np = lazy("numpy")

POLICY_FILE = Path(__file__).with_name("data") / "tunio-picker.json"
SIZES = (1, 2, 3, 4, 6, 0)  # subset sizes the picker chooses from (0: every dimension)
GEN_EDGES = (1, 2, 3, 5, 9)  # generation buckets: 0 | 1 | 2 | 3-4 | 5-8 | 9+
BIG_GAIN, SMALL_GAIN = math.log(1.05), math.log(1.005)  # progress buckets, in log units
SHARE_EDGES = (0.5, 0.8)  # share of the predicted impact in the top two dimensions
STATES = (len(GEN_EDGES) + 1) * 4 * (len(SHARE_EDGES) + 1)
FEATURES = ("bias", "prior", "prior_unexplored", "headroom", "effect_unexplored", "unexplored")
PENALTY = 0.02  # weight of the picked share per generation: tuning every dimension for 50 generations costs 1
GAMMA = 0.9
REWARD_DELAY = 5  # generations
CREDIT_UNIT = math.log(1.1)  # a bandit reward of 1 is a 10% gain
RIDGE = 1.0
UCB_ALPHA = 0.5
EPSILON = 0.1  # online exploration of the subset size
ONLINE_WEIGHT = 100.0  # the pretrained observer counts as this many observations online
LEARNING_RATE = 0.2  # online Q-learning step


# ---- the pretrained policy ----


@dataclass
class PickerPolicy:
    priors: dict[str, float]  # knob -> prior impact in [0, 1]
    a: np.ndarray  # the observer's LinUCB matrix (FEATURES x FEATURES)
    b: np.ndarray  # and vector
    q: np.ndarray  # the picker's Q-table (STATES x len(SIZES))
    meta: dict = field(default_factory=dict)

    def prior(self, knobs) -> tuple[float, bool]:
        """A dimension's prior impact (the largest of its knobs'), and whether any of its knobs is known."""
        known = [self.priors[k] for k in knobs if k in self.priors]
        if known:
            return max(known), True
        return (float(np.mean(list(self.priors.values()))) if self.priors else 0.5), False

    def to_json(self) -> dict:
        return {
            "format": "iotuner-tunio-picker",
            "version": 1,
            "features": list(FEATURES),
            "sizes": list(SIZES),
            "states": STATES,
            "priors": {k: round(v, 4) for k, v in sorted(self.priors.items())},
            "observer": {"a": np.round(self.a, 5).tolist(), "b": np.round(self.b, 5).tolist()},
            "q": np.round(self.q, 5).tolist(),
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, doc: dict, where: str = "picker policy") -> PickerPolicy:
        if not isinstance(doc, dict) or doc.get("format") != "iotuner-tunio-picker" or doc.get("version") != 1:
            raise PolicyError(f"{where} is not an iotuner TunIO picker policy (version 1)")
        if doc.get("features") != list(FEATURES) or doc.get("sizes") != list(SIZES) or doc.get("states") != STATES:
            raise PolicyError(
                f"{where} was trained with other features, sizes or states: regenerate it with "
                f"bench/tunio_pretrain.py picker"
            )
        try:
            a = np.array(doc["observer"]["a"], dtype=float)
            b = np.array(doc["observer"]["b"], dtype=float)
            q = np.array(doc["q"], dtype=float)
            priors = {str(k): float(v) for k, v in doc["priors"].items()}
        except (KeyError, TypeError, ValueError) as e:
            raise PolicyError(f"{where} is damaged: {e}") from None
        if a.shape != (len(FEATURES), len(FEATURES)) or b.shape != (len(FEATURES),) or q.shape != (STATES, len(SIZES)):
            raise PolicyError(f"{where} has arrays of the wrong shape")
        return cls(priors, a, b, q, dict(doc.get("meta", {})))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), separators=(",", ":")) + "\n")

    @classmethod
    def blank(cls, priors: Mapping[str, float] | None = None) -> PickerPolicy:
        """Before training: no preference (used by the trainer)."""
        return cls(
            dict(priors or {}), np.eye(len(FEATURES)) * RIDGE, np.zeros(len(FEATURES)), np.zeros((STATES, len(SIZES)))
        )


@lru_cache(maxsize=4)
def load_policy(path: str | Path = POLICY_FILE) -> PickerPolicy:
    return PickerPolicy.from_json(policy_file.read(path, "picker policy"), str(path))


# ---- what the study has seen ----


@dataclass(frozen=True)
class Dim:
    name: str
    labels: tuple[str, ...]
    knobs: frozenset[str]


@dataclass
class Seen:
    """The points measured so far (value index per dimension), their scores (log of the objective, higher is
    better), the knobs that took effect unlike the default in each (None: not known), and the default's score."""

    rows: list[tuple[int, ...]]
    scores: list[float]
    took: list[frozenset[str] | None]
    default: float


def main_effects(dims: Sequence[Dim], seen: Seen) -> list[np.ndarray]:
    """Each dimension's main effect per value (log units): a ridge regression of the scores on the one-hot
    encoded points (values never measured get 0)."""
    offsets = np.cumsum([0] + [len(d.labels) for d in dims])
    if not seen.rows:
        return [np.zeros(len(d.labels)) for d in dims]
    x = np.zeros((len(seen.rows), offsets[-1]))
    for i, row in enumerate(seen.rows):
        x[i, offsets[:-1] + np.asarray(row)] = 1.0
    y = np.asarray(seen.scores) - np.mean(seen.scores)
    beta = np.linalg.solve(x.T @ x + RIDGE * np.eye(offsets[-1]), x.T @ y)
    return [beta[offsets[j] : offsets[j + 1]] for j in range(len(dims))]


def contexts(
    dims: Sequence[Dim], seen: Seen, incumbent: Sequence[int], priors: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """(the observer's context of every dimension, which dimensions are inert)."""
    effects = main_effects(dims, seen)
    rows = np.asarray(seen.rows, dtype=int).reshape(len(seen.rows), len(dims))
    took = [t for t in seen.took if t is not None]
    ctx = np.zeros((len(dims), len(FEATURES)))
    inert = np.zeros(len(dims), dtype=bool)
    for j, d in enumerate(dims):
        values = set(rows[:, j].tolist()) | {incumbent[j]}
        unexplored = 1.0 - len(values) / len(d.labels)
        beta = effects[j]
        seen_beta = beta[sorted(values)]
        effect = float(seen_beta.max() - seen_beta.min())
        headroom = float(seen_beta.max() - beta[incumbent[j]])
        # bounded, so that no dimension looks uncertain just for being extreme (UCB)
        ctx[j] = (
            1.0,
            priors[j],
            priors[j] * unexplored,
            math.tanh(headroom / CREDIT_UNIT),
            math.tanh(effect / CREDIT_UNIT) * unexplored,
            unexplored,
        )
        inert[j] = len(values) >= 2 and len(took) >= 2 and not any(t & d.knobs for t in took)
    return ctx, inert


# ---- the picker ----


def picker_state(generation: int, incumbents: Sequence[float], predicted: np.ndarray) -> int:
    """generation bucket x recent progress x concentration of the predicted impact."""
    g = int(np.searchsorted(GEN_EDGES, generation, side="right"))
    progress = 0
    if generation >= 1 and len(incumbents) >= 2:
        last = incumbents[-1] - incumbents[-2]
        if last >= BIG_GAIN:
            progress = 0
        elif last >= SMALL_GAIN:
            progress = 1
        else:
            stalled = len(incumbents) >= 3 and incumbents[-2] - incumbents[-3] < SMALL_GAIN
            progress = 3 if stalled else 2
    positive = np.clip(predicted, 0.0, None)
    total = float(positive.sum())
    share = float(np.sort(positive)[-2:].sum() / total) if total > 0 else 0.0
    c = int(np.searchsorted(SHARE_EDGES, share, side="right"))
    return (g * 4 + progress) * (len(SHARE_EDGES) + 1) + c


@dataclass
class Decision:
    generation: int
    state: int
    action: int
    subset: list[int]
    contexts: np.ndarray
    before: float  # the incumbent's score before the generation
    after: float | None = None  # and after it
    order: list[int] = field(default_factory=list)  # every dimension, most promising first


class Picker:
    """Chooses each generation's subset; learns online from what each generation brought."""

    def __init__(
        self,
        dims: Sequence[Dim],
        policy: PickerPolicy,
        seed: int,
        learn: bool = True,
        epsilon: float = EPSILON,
        weight: float | None = ONLINE_WEIGHT,
    ):
        self.dims, self.policy, self.seed, self.learn, self.epsilon = list(dims), policy, seed, learn, epsilon
        self.priors = [policy.prior(d.knobs)[0] for d in self.dims]
        a, b = policy.a.copy(), policy.b.copy()
        if weight is not None:  # the pretrained observer as a prior worth `weight` observations
            n = max(1.0, float(policy.meta.get("observer_updates", 1.0)))
            scale = min(1.0, weight / n)
            a = (a - RIDGE * np.eye(len(FEATURES))) * scale + RIDGE * np.eye(len(FEATURES))
            b = b * scale
        self.a, self.b, self.q = a, b, policy.q.copy()
        self.rate = LEARNING_RATE
        self.visits: np.ndarray | None = None  # pretraining: returns averaged per state and action
        self.decisions: list[Decision] = []
        self.updated = 0  # decisions whose Q-value was updated

    def _theta(self) -> tuple[np.ndarray, np.ndarray]:
        inv = np.linalg.inv(self.a)
        return inv @ self.b, inv

    def scores(self, ctx: np.ndarray, explore: bool = True) -> np.ndarray:
        theta, inv = self._theta()
        mean = ctx @ theta
        if not explore:
            return mean
        return mean + UCB_ALPHA * np.sqrt(np.einsum("ij,jk,ik->i", ctx, inv, ctx))

    def size_of(self, action: int) -> int:
        k = SIZES[action]
        return len(self.dims) if k == 0 else min(k, len(self.dims))

    def look(self, generation: int, seen: Seen, incumbent: Sequence[int], incumbents: Sequence[float]) -> dict:
        """The state observer: every dimension's context, the picker's state and the dimensions in order of
        promise (upper confidence bound; inert ones last)."""
        rng = random.Random(f"{self.seed}:order:{generation}")
        ctx, inert = contexts(self.dims, seen, incumbent, self.priors)
        predicted = self.scores(ctx, explore=False)
        ucb = self.scores(ctx)
        state = picker_state(generation, incumbents, np.where(inert, 0.0, predicted))
        order = sorted(range(len(self.dims)), key=lambda j: (inert[j], -ucb[j], rng.random()))
        return {
            "generation": generation,
            "state": state,
            "contexts": ctx,
            "order": order,
            "before": incumbents[-1] if incumbents else seen.default,
        }

    def choose(self, look: dict, action: int | None = None) -> Decision:
        """The picker: the subset size (greedy on the Q-table, exploring with probability epsilon), then the
        observer's top dimensions."""
        rng = random.Random(f"{self.seed}:picker:{look['generation']}")
        if action is None:
            q = self.q[look["state"]]
            if self.learn and rng.random() < self.epsilon:
                action = rng.randrange(len(SIZES))
            else:
                best = np.flatnonzero(q == q.max())
                action = int(best[rng.randrange(len(best))]) if len(best) > 1 else int(best[0])
        d = Decision(
            look["generation"],
            look["state"],
            action,
            look["order"][: self.size_of(action)],
            look["contexts"],
            look["before"],
            order=look["order"],
        )
        self.decisions.append(d)
        return d

    def decide(self, generation: int, seen: Seen, incumbent: Sequence[int], incumbents: Sequence[float]) -> Decision:
        """The subset of generation `generation` (dimension indices, most promising first)."""
        return self.choose(self.look(generation, seen, incumbent, incumbents))

    def observe(self, decision: Decision, changed: Sequence[int], gain: float, after: float, scale: float) -> None:
        """After a generation: its gain (log units, over the incumbent before it) made through the dimensions
        `changed` (those in which its best point differs from the incumbent), and the gain so far (`scale`,
        for normalizing). Updates the observer at once and the picker once REWARD_DELAY generations are known."""
        decision.after = after
        if not self.learn:
            return
        for j in decision.subset:
            share = gain / len(changed) if gain > 0 and j in changed else 0.0
            x = decision.contexts[j]
            self.a += np.outer(x, x)
            self.b += min(3.0, share / CREDIT_UNIT) * x
        done = [d for d in self.decisions if d.after is not None]
        while len(done) - self.updated > REWARD_DELAY:
            self.update_q(done[self.updated], done[self.updated + 1 : self.updated + 1 + REWARD_DELAY], scale, True)
            self.updated += 1

    def finish(self, scale: float) -> None:
        """At the end of a session, the decisions still waiting for their delay get what followed them."""
        done = [d for d in self.decisions if d.after is not None]
        while self.learn and self.updated < len(done):
            self.update_q(done[self.updated], done[self.updated + 1 :], scale, False)
            self.updated += 1

    def reward(self, d: Decision, scale: float) -> float:
        """norm_perf - norm_param of one generation: its gain over the gain so far, minus the picked share."""
        progress = (d.after - d.before) / scale if scale > SMALL_GAIN else 0.0
        return progress - PENALTY * len(d.subset) / len(self.dims)

    def update_q(self, d: Decision, later: Sequence[Decision], scale: float, bootstrap: bool) -> None:
        """n-step Q-learning: the rewards of the generation and of the next ones up to the delay, then (with
        bootstrap) the best value of the state that follows them."""
        ret = self.reward(d, scale)
        tail = later[:-1] if bootstrap else later
        for i, nxt in enumerate(tail, start=1):
            ret += GAMMA**i * self.reward(nxt, scale)
        if bootstrap and later:
            ret += GAMMA ** len(later) * float(self.q[later[-1].state].max())
        if self.visits is not None:  # offline: the sample average of the returns (a floor keeps it moving)
            self.visits[d.state, d.action] += 1
            rate = max(1.0 / self.visits[d.state, d.action], 0.01)
        else:
            rate = self.rate
        self.q[d.state, d.action] += rate * (ret - self.q[d.state, d.action])


class FanovaPicker:
    """The non-learned ablation: before each generation, the dimensions that Optuna's fANOVA finds most
    important among the points measured so far, enough of them to hold 80% of the importance (at least
    two); every dimension in the first generation, when nothing is known."""

    COVER = 0.8

    def __init__(self, dims: Sequence[Dim], seed: int):
        self.dims, self.seed = list(dims), seed
        self.decisions: list[Decision] = []

    def importance(self, seen: Seen) -> np.ndarray:
        import optuna
        from optuna.distributions import CategoricalDistribution

        dists = {d.name: CategoricalDistribution(list(d.labels)) for d in self.dims}
        trials = [
            optuna.trial.create_trial(
                params={d.name: d.labels[i] for d, i in zip(self.dims, row)}, distributions=dists, value=score
            )
            for row, score in zip(seen.rows, seen.scores)
        ]
        study = optuna.create_study(direction="maximize")
        study.add_trials(trials)
        found = optuna.importance.get_param_importances(
            study, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=self.seed), normalize=True
        )
        return np.array([found.get(d.name, 0.0) for d in self.dims])

    def decide(self, generation: int, seen: Seen, incumbent: Sequence[int], incumbents: Sequence[float]) -> Decision:
        rng = random.Random(f"{self.seed}:fanova:{generation}")
        varied = [j for j in range(len(self.dims)) if len({r[j] for r in seen.rows}) >= 2]
        if len(seen.rows) < 8 or len(varied) < 2:
            order = list(range(len(self.dims)))
            rng.shuffle(order)
            k = len(order)
        else:
            imp = self.importance(seen)
            order = sorted(range(len(self.dims)), key=lambda j: (-imp[j], rng.random()))
            total, k = 0.0, 0
            while k < len(order) and (total < self.COVER * imp.sum() or k < 2):
                total += imp[order[k]]
                k += 1
        d = Decision(
            generation,
            0,
            0,
            order[:k],
            np.zeros((len(self.dims), len(FEATURES))),
            incumbents[-1] if incumbents else seen.default,
            order=order,
        )
        self.decisions.append(d)
        return d

    def observe(self, decision: Decision, changed, gain, after, scale) -> None:
        decision.after = after


# ---- the genetic algorithm inside a subset ----


def widen(decision: Decision, exhausted) -> list[int]:
    """The subset, widened in the picker's order until the subspace around the incumbent still has points to
    measure (`exhausted(subset)` says it has none)."""
    subset = list(decision.subset)
    for j in decision.order:
        if not exhausted(subset):
            break
        if j not in subset:
            subset.append(j)
    decision.subset = subset
    return subset


def breed(
    dims: Sequence[Dim],
    subset: Sequence[int],
    incumbent: Sequence[int],
    parents: Sequence[tuple[tuple[int, ...], float]],
    measured: set,
    rng: random.Random,
) -> tuple[int, ...]:
    """One child of TunIO's GA inside the subset: tournament selection, uniform crossover and mutation
    (`strategies.ga`) on the subset's dimensions; every other dimension is the incumbent's. A child already
    measured is bred again (up to 20 times). Without two parents, a random point of the subspace."""

    mutation = max(0.1, 1.0 / max(1, len(subset)))
    child = tuple(incumbent)
    for _ in range(20):
        c = list(incumbent)
        if len(parents) >= 2:
            (a, _), (b, _) = tournament(parents, rng, lambda p: p[1])
            genes = crossover(a, b, list(subset), lambda j: range(len(dims[j].labels)), mutation, rng)
        else:
            genes = {j: rng.randrange(len(dims[j].labels)) for j in subset}
        for j, v in genes.items():
            c[j] = v
        child = tuple(c)
        if child not in measured:
            break
    return child


def subspace_exhausted(dims: Sequence[Dim], subset: Sequence[int], incumbent: Sequence[int], measured: set) -> bool:
    """Whether every point that differs from the incumbent only in the subset was measured."""
    size = math.prod(len(dims[j].labels) for j in subset)
    fixed = [j for j in range(len(dims)) if j not in subset]
    inside = sum(1 for row in measured if all(row[j] == incumbent[j] for j in fixed))
    return inside >= size
