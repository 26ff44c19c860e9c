"""Offline training of TunIO's agents (paper 002, sections III-C and III-D).

- The subset picker: from recorded parameter sweeps of real kernels
  (bench/tunio_sweep.py), PCA over the parameters with respect to perf gives
  each knob's prior impact; a surrogate of each sweep (extra trees over the
  measured points, with the measured noise) is a Gymnasium environment in
  which the impact-first GA tunes, so the state observer (a linear contextual
  bandit) and the picker (a Q-table) learn from thousands of emulated tuning
  sessions.
- The learned stopper: synthetic logarithmic tuning curves with random
  downward shifts (a Gymnasium environment too), and a Q-table over
  (iteration, the iteration's gain, iterations since the last gain).

Both are deterministic for a seed and write small JSON files
(`impact.POLICY_FILE`, `stopper.POLICY_FILE`); `bench/tunio_pretrain.py`
regenerates them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...space import SearchSpace, from_json

SWEEP_FORMAT, SWEEP_VERSION = "iotuner-sample-sweep", 1


class SweepError(ValueError):
    pass


@dataclass
class Sweep:
    """A recorded sweep: points of a space (value indices) and their measured objective values."""

    name: str
    space: SearchSpace
    rows: np.ndarray  # (points, dimensions) value indices
    values: list[list[float]]  # every run of each point
    default: list[float]  # the default settings' runs
    took_effect: list[set[str] | None]  # knobs that took effect unlike the default, per point
    direction: str = "maximize"

    def medians(self) -> np.ndarray:
        return np.array([float(np.median(v)) for v in self.values])

    def score(self, values) -> np.ndarray:
        """log of the objective, higher is better."""
        v = np.log(np.asarray(values, dtype=float))
        return v if self.direction == "maximize" else -v


def load_sweep(path: str | Path) -> Sweep:
    """Reads a sweep written by bench/tunio_sweep.py, keeping the points with at least one run."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SweepError(f"cannot read sweep {path}: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != SWEEP_FORMAT or doc.get("version") != SWEEP_VERSION:
        raise SweepError(f"{path} is not a sweep of format {SWEEP_FORMAT} version {SWEEP_VERSION}")
    space = from_json(doc["space"], f"{path}: space")
    rows, values, took = [], [], []
    for i, p in enumerate(doc["points"]):
        runs = [float(v) for v in p.get("runs", []) if v and v > 0]
        if not runs:
            continue
        idx = []
        for d, v in zip(space.dimensions, p["values"]):
            labels = d.labels
            if d.label(v) not in labels:
                raise SweepError(f"{path}: points[{i}] has {d.name}={json.dumps(v)}, not a value of the space")
            idx.append(labels.index(d.label(v)))
        rows.append(idx)
        values.append(runs)
        took.append(set(p["took_effect"]) if p.get("took_effect") is not None else None)
    default = [float(v) for v in doc["default"]["runs"] if v and v > 0]
    if len(rows) < 8 or not default:
        raise SweepError(f"{path}: too few measured points ({len(rows)}) or no run of the default")
    return Sweep(
        doc.get("name", path.stem),
        space,
        np.array(rows, dtype=int),
        values,
        default,
        took,
        doc.get("objective", {}).get("direction", "maximize"),
    )


# ---- the learned stopper: synthetic logarithmic tuning curves ----

CURVE_ITERATIONS = 60
REWARD_DELAY = 5  # iterations: the reward of a decision is what the next five iterations bring


@dataclass
class Curve:
    """One emulated tuning session: the incumbent's true and observed value after each iteration 0..n
    (the default is 1), and the fixed tuning time before and after the iterations (in iterations)."""

    true: np.ndarray
    observed: np.ndarray
    overhead: float

    def roti(self) -> np.ndarray:
        """RoTI after each iteration: the true gain over the time spent, overhead included."""
        i = np.arange(len(self.true))
        return (self.true - self.true[0]) / (self.overhead + i)


def log_curve(rng: np.random.Generator, iterations: int = CURVE_ITERATIONS) -> Curve:
    """A tuning curve as in section III-D: performance gained along a logarithm of the iteration, with a
    random total gain, growth rate and tuning overhead; "randomized shifts down the curve": stretches where
    the search is stuck on the wrong parameters (no progress, then it catches up) and where the observed
    incumbent dips (a lucky median revised down); the incumbent moves in jumps, observed with noise."""
    i = np.arange(iterations + 1)
    total = 1.0 if rng.random() < 0.1 else math.exp(rng.uniform(math.log(1.02), math.log(20.0)))
    rate = math.exp(rng.uniform(math.log(0.03), math.log(5.0)))
    latent = 1.0 + (total - 1.0) * np.log1p(rate * i) / math.log1p(rate * iterations)
    stuck = np.zeros(iterations + 1, dtype=bool)
    for _ in range(rng.poisson(1.0)):
        start = int(rng.integers(1, iterations))
        stuck[start : start + int(rng.integers(3, 16))] = True
    jump = rng.uniform(0.3, 1.0)
    true = np.empty(iterations + 1)
    true[0] = 1.0
    for j in range(1, iterations + 1):
        true[j] = latent[j] if not stuck[j] and rng.random() < jump else true[j - 1]
    observed = true * np.exp(rng.normal(0.0, rng.uniform(0.0, 0.04), iterations + 1))
    for _ in range(rng.poisson(0.7)):
        start = int(rng.integers(1, iterations))
        observed[start : start + int(rng.integers(1, 4))] *= 1.0 - rng.uniform(0.0, 0.1)
    observed[0] = 1.0
    return Curve(true, observed, rng.uniform(0.25, 3.0))


class MissingExtra(RuntimeError):
    """An optional dependency that only pretraining needs is not installed."""


def _gym():
    from .... import optional

    try:  # an optional extra: tuning with the shipped policies needs none of it
        return optional.load("gymnasium", "pretraining TunIO's stopper")
    except optional.Missing as e:
        raise MissingExtra(str(e)) from None


def curve_env(seed: int = 0):
    """The stopper's environment (Gymnasium): one synthetic curve per episode; observation: the stopper's
    state; actions 0 continue, 1 stop; reward of continuing: the change of RoTI over the iteration, as a share
    of the best RoTI of the curve in hindsight (so the return of a session is its RoTI at the stop)."""
    gym = _gym()
    from . import stopper as stoppers

    class CurveEnv(gym.Env):
        observation_space = gym.spaces.Discrete(stoppers.STATES)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.curve = log_curve(self.np_random)
            self.roti = self.curve.roti()
            self.best = max(float(self.roti[1:].max()), 1e-12)
            self.states = stoppers.states(self.curve.observed)
            self.i = 1
            return self.states[0], {"roti": 0.0}

        def step(self, action):
            if action == 1:
                return self.states[self.i - 1], 0.0, True, False, {"share": self.roti[self.i] / self.best}
            reward = float(self.roti[self.i + 1] - self.roti[self.i]) / self.best
            self.i += 1
            end = self.i >= len(self.roti) - 1
            return self.states[self.i - 1], reward, False, end, {"share": self.roti[self.i] / self.best}

    env = CurveEnv()
    env.reset(seed=seed)
    return env


def train_stopper(seed: int = 0, episodes: int = 20000, epsilon: float = 0.2):
    """Tabular Q-learning of stop / continue on synthetic curves, rewarded with a five-iteration delay: the
    value of continuing at an iteration is learned from what the next REWARD_DELAY iterations brought, then
    the value of the state reached (n-step Q-learning). Deterministic for a seed."""
    from . import stopper as stoppers

    env = curve_env(seed)
    rng = np.random.default_rng(seed)
    q = np.zeros(stoppers.STATES)
    visits = np.zeros(stoppers.STATES, dtype=int)
    shares = []
    for episode in range(episodes):
        s, _ = env.reset(seed=int(rng.integers(2**31)))
        path, rewards, done = [], [], False
        while not done:
            explore = rng.random() < epsilon * (1 - episode / episodes)
            stop = (rng.random() < 0.5) if explore else q[s] <= 0
            if stop:
                _, _, done, _, info = env.step(1)
                break
            path.append(s)
            s, r, term, trunc, info = env.step(0)
            rewards.append(r)
            done = term or trunc
        shares.append(info["share"])
        # every continue decision, updated once its REWARD_DELAY iterations are known
        n = len(path)
        for j in range(n):
            end = min(j + REWARD_DELAY, n)
            target = sum(rewards[j:end])
            if end < n:  # bootstrap from the state reached after the delay (stopping is worth 0)
                target += max(0.0, q[path[end]])
            visits[path[j]] += 1
            q[path[j]] += (target - q[path[j]]) / max(visits[path[j]], 20)
    tail = shares[-min(2000, episodes) :]
    meta = {
        "seed": seed,
        "episodes": episodes,
        "epsilon": epsilon,
        "iterations": CURVE_ITERATIONS,
        "reward_delay": REWARD_DELAY,
        "mean_share_of_best_roti_last_episodes": round(float(np.mean(tail)), 4),
    }
    return stoppers.StopperPolicy(tuple(float(x) for x in q), tuple(int(v) for v in visits), meta)


# ---- the subset picker: parameter sweeps ----


def one_hot(space: SearchSpace, rows: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """The one-hot encoding of points (value indices), and each column's dimension."""
    counts = [len(d.values) for d in space.dimensions]
    offsets = np.cumsum([0] + counts)
    x = np.zeros((len(rows), offsets[-1]))
    for j in range(len(counts)):
        x[np.arange(len(rows)), offsets[j] + rows[:, j]] = 1.0
    owner = [j for j, c in enumerate(counts) for _ in range(c)]
    return x, owner


def pca_impacts(sweep: Sweep) -> dict[str, float]:
    """Each dimension's impact on perf, by PCA over the parameters with respect to perf (section III-C):
    principal component regression of log perf on the standardized one-hot points (the components that
    carry 95% of their variance), mapped back to the parameters; a dimension's impact is the norm of its
    columns' coefficients, scaled to a maximum of 1."""
    from sklearn.decomposition import PCA

    x, owner = one_hot(sweep.space, sweep.rows)
    keep = x.std(axis=0) > 0
    x, owner = x[:, keep], [o for o, k in zip(owner, keep) if k]
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    y = sweep.score(sweep.medians())
    pca = PCA(n_components=0.95, svd_solver="full", random_state=0).fit(z)
    t = pca.transform(z)
    gamma = (t.T @ (y - y.mean())) / (t**2).sum(axis=0)
    beta = pca.components_.T @ gamma  # per column
    impact = np.zeros(len(sweep.space.dimensions))
    for col, dim in enumerate(owner):
        impact[dim] += beta[col] ** 2
    impact = np.sqrt(impact)
    impact = impact / impact.max() if impact.max() > 0 else impact
    return {d.name: float(v) for d, v in zip(sweep.space.dimensions, impact)}


def variance_impacts(sweep: Sweep) -> dict[str, float]:
    """The sweep's variance decomposition (main effects): the variance of each dimension's mean log perf
    per value, scaled to a maximum of 1. What the PCA impacts are checked against."""
    y = sweep.score(sweep.medians())
    out = {}
    for j, d in enumerate(sweep.space.dimensions):
        means = [y[sweep.rows[:, j] == v].mean() for v in range(len(d.values)) if (sweep.rows[:, j] == v).any()]
        out[d.name] = float(np.var(means)) if len(means) > 1 else 0.0
    top = max(out.values()) or 1.0
    return {k: v / top for k, v in out.items()}


def knob_priors(sweeps: Sequence[Sweep]) -> dict[str, float]:
    """Each knob's prior impact: its dimension's PCA impact, averaged over the sweeps that vary it."""
    acc: dict[str, list[float]] = {}
    for s in sweeps:
        impacts = pca_impacts(s)
        for d in s.space.dimensions:
            for k in d.knobs():
                acc.setdefault(k, []).append(impacts[d.name])
    return {k: float(np.mean(v)) for k, v in sorted(acc.items())}


@dataclass
class Surrogate:
    """A sweep's response surface: extra trees over the measured points, predicted for every point of the
    space (log perf), with the noise the default's runs showed."""

    name: str
    space: SearchSpace
    table: np.ndarray  # predicted score of every point, in the space's product order
    sigma: float

    def score(self, row: Sequence[int]) -> float:
        return float(self.table[tuple(row)])


MAX_TABLE = 500_000
MAX_SIGMA = (
    0.1  # the sweeps' noise, capped at what runs show on a quiet machine (1-10%): they were recorded on a loaded one
)


def surrogate(sweep: Sweep, seed: int) -> Surrogate:
    from sklearn.ensemble import ExtraTreesRegressor

    shape = tuple(len(d.values) for d in sweep.space.dimensions)
    if math.prod(shape) > MAX_TABLE:
        raise SweepError(f"sweep {sweep.name}: a space of {math.prod(shape):,} points is too large to tabulate")
    x, _ = one_hot(sweep.space, sweep.rows)
    y = sweep.score(sweep.medians())
    model = ExtraTreesRegressor(n_estimators=100, min_samples_leaf=2, random_state=seed).fit(x, y)
    every = np.array(np.unravel_index(np.arange(math.prod(shape)), shape)).T
    table = model.predict(one_hot(sweep.space, every)[0]).reshape(shape)
    logs = np.log(sweep.default)
    sigma = float(1.4826 * np.median(np.abs(logs - np.median(logs)))) if len(logs) > 2 else 0.05
    return Surrogate(sweep.name, sweep.space, table, min(max(sigma, 0.01), MAX_SIGMA))


def picker_env(surrogates: Sequence[Surrogate], policy, generations: int = 15, population: int = 8, seed: int = 0):
    """The picker's environment (Gymnasium): one emulated tuning session per episode on a surrogate, over a
    random subspace of its dimensions (the others pinned at random values) with its noise scaled at random;
    TunIO's GA varies the subset the action picks. Observation: the picker's state, as the state observer
    (which lives here, learning across episodes) sees it; action: a subset size (impact.SIZES); reward: the
    generation's norm_perf - norm_param."""
    gym = _gym()
    import random as pyrandom

    from . import impact

    visits = np.zeros_like(policy.q)

    class SubsetEnv(gym.Env):
        observation_space = gym.spaces.Discrete(impact.STATES)
        action_space = gym.spaces.Discrete(len(impact.SIZES))

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            rng = self.np_random
            self.sur = surrogates[int(rng.integers(len(surrogates)))]
            dims = self.sur.space.dimensions
            n = int(rng.integers(max(3, len(dims) - 6), len(dims) + 1))
            self.active = sorted(int(j) for j in rng.choice(len(dims), n, replace=False))
            self.full = [int(rng.integers(len(d.values))) for d in dims]
            self.dims = [
                impact.Dim(dims[j].name, tuple(dims[j].labels), frozenset(dims[j].knobs())) for j in self.active
            ]
            self.sigma = self.sur.sigma * rng.uniform(0.5, 2.0)
            self.rng = pyrandom.Random(int(rng.integers(2**31)))
            self.picker = impact.Picker(self.dims, policy, int(rng.integers(2**31)), learn=True, weight=None)
            self.picker.a, self.picker.b, self.picker.q = policy.a, policy.b, policy.q  # learn in place
            self.picker.visits = visits
            sub = self.sur.table[tuple(slice(None) if j in self.active else self.full[j] for j in range(len(dims)))]
            start = tuple(self.full[j] for j in self.active)
            self.default = self._true(start)
            self.scale = max(float(sub.max()) - self.default, 1e-6)
            self.seen = impact.Seen([], [], [], self.default)
            self.incumbent, self.best = start, self.default
            self.incumbents, self.prev, self.measured, self.g = [self.default], [], set(), 0
            self.look = self.picker.look(0, self.seen, self.incumbent, self.incumbents)
            return self.look["state"], {}

        def _true(self, row) -> float:
            full = list(self.full)
            for j, v in zip(self.active, row):
                full[j] = v
            return self.sur.score(full)

        def step(self, action):
            d = self.picker.choose(self.look, int(action))
            parents = self.prev + ([(self.incumbent, self.best)] if self.g > 0 else [])
            generation = []
            for _ in range(population - (1 if self.g > 0 else 0)):
                # as the strategy does before each child: a subspace measured out is widened
                subset = impact.widen(
                    d, lambda s: impact.subspace_exhausted(self.dims, s, self.incumbent, self.measured)
                )
                child = impact.breed(self.dims, subset, self.incumbent, parents, self.measured, self.rng)
                if child in self.measured:
                    continue
                s = self._true(child) + self.rng.gauss(0.0, self.sigma)
                self.measured.add(child)
                self.seen.rows.append(child)
                self.seen.scores.append(s)
                self.seen.took.append(None)
                generation.append((child, s))
            before_row, before = self.incumbent, self.best
            top = max(generation, key=lambda p: p[1], default=None)
            if top is not None and top[1] > self.best:
                self.incumbent, self.best = top
            gain = self.best - before
            changed = [j for j in subset if self.incumbent[j] != before_row[j]]
            self.picker.observe(d, changed if gain > 0 else [], gain, self.best, self.scale)
            self.prev = generation
            self.g += 1
            self.incumbents.append(self.best)
            done = self.g >= generations
            if done:
                self.picker.finish(self.scale)
            else:
                self.look = self.picker.look(self.g, self.seen, self.incumbent, self.incumbents)
            reached = (self._true(self.incumbent) - self.default) / self.scale if self.scale > 1e-3 else 1.0
            return (
                self.look["state"],
                self.picker.reward(d, self.scale),
                done,
                False,
                {"reached": reached, "subset": len(subset)},
            )

    env = SubsetEnv()
    env.reset(seed=seed)
    return env


def train_picker(
    sweeps: Sequence[Sweep], seed: int = 0, episodes: int = 3000, generations: int = 15, epsilon: float = 0.3
):
    """Pretrains the picker: PCA priors from the sweeps, then Q-learning of the subset size (epsilon-greedy,
    decaying) and the observer's bandit, over emulated sessions on the sweeps' surrogates. Deterministic for
    a seed."""
    from . import impact

    priors = knob_priors(sweeps)
    surrogates = [surrogate(s, seed) for s in sweeps]
    policy = impact.PickerPolicy.blank(priors)
    env = picker_env(surrogates, policy, generations, seed=seed)
    rng = np.random.default_rng(seed)
    reached, sizes = [], []
    updates = 0
    for episode in range(episodes):
        state, _ = env.reset(seed=int(rng.integers(2**31)))
        done = False
        eps = epsilon * (1 - episode / episodes) + 0.02
        while not done:
            q = policy.q[state]
            action = (
                int(rng.integers(len(impact.SIZES)))
                if rng.random() < eps
                else int(rng.choice(np.flatnonzero(q == q.max())))
            )
            state, _, done, _, info = env.step(action)
            sizes.append(info["subset"])
            updates += info["subset"]
        reached.append(info["reached"])
    tail = max(1, episodes // 5)
    policy.meta = {
        "seed": seed,
        "episodes": episodes,
        "generations": generations,
        "epsilon": epsilon,
        "sweeps": [s.name for s in sweeps],
        "observer_updates": updates,
        "share_of_best_gain_reached_last_episodes": round(float(np.mean(reached[-tail:])), 4),
        "pca_impacts": {s.name: {k: round(v, 3) for k, v in pca_impacts(s).items()} for s in sweeps},
        "variance_impacts": {s.name: {k: round(v, 3) for k, v in variance_impacts(s).items()} for s in sweeps},
    }
    return policy
