"""The hybrid model corrected by every trial, and the next point chosen by the corrected model and what it still
does not know.

Each measured run tells where the analytical model was wrong: per phase direction (the write phases, the read
phases: what the model predicts apart), the log of the measured time over the predicted one. A Gaussian process
over the points' settings (one-hot per dimension, scikit-learn) learns that residual, zero where nothing was
measured (the analytical model stands), near a measured point as measured there: so a knob the model does not
price (HDF5's alignment) or an effect it does not count (a sieved write that makes the following read faster)
is learnt from the runs that show it. A read cannot change the writes made before it: when every write phase
comes first, the writes' model leaves out the read hints (and learns the write hints' effects from fewer runs),
while the reads' model keeps the write hints. A residual counts at most a factor of e (runs have heavy tails). A
run without phase times (an objective read from the output, a run without a report) corrects the predicted
objective itself instead.

The next point is the one whose objective is best with each phase at the optimistic end of its uncertainty
(an upper confidence bound, `weight` standard deviations): where the model is sure, its prediction decides;
where it is not (far from every measured point), the point is worth a run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ....perfmodel import predict
from . import canonical

PHASES = ("write", "read")
READ_ONLY = {"mpiio.romio_cb_read", "mpiio.romio_ds_read", "mpiio.ind_rd_buffer_size"}
VALUE = "value"
LEVEL = 0.3  # prior spread (log) of a residual shared by every point (the machine's level on the day)
MAIN = 0.3  # ... of each knob value's own part (what the model gets wrong about one knob)
SCALE = 0.3  # ... of the part particular to a combination (knobs acting jointly)
NEAR = 0.6  # correlation of two points' particular parts per dimension they share
CLIP = 1.0  # a residual counts at most this much (log): runs have heavy tails
NOISE = 0.15  # a run's own spread (log): 0.13-0.16 on the recorded strided surfaces


def times_of(measurement) -> dict[str, float] | None:
    """A run's write and read time (seconds; the phases' clock), from its report or a replayed run."""
    if measurement is None or not measurement.ok:
        return None
    rep = measurement.report
    if rep and isinstance(rep.get("totals"), Mapping):
        t = rep["totals"]
        try:
            return {"write": float(t["write_time_s"]), "read": float(t["read_time_s"])}
        except (KeyError, TypeError, ValueError):
            return None
    d = measurement.details or {}
    if "write_s" in d and "read_s" in d:
        return {"write": float(d["write_s"]), "read": float(d["read_s"])}
    return None


class Learner:
    """predictor: the prior's `predict.Predictor`; baseline: the flat settings under every point."""

    def __init__(self, space, predictor, objective, nodes: int, baseline: Mapping[str, Any], weight: float = 0.5):
        self.space, self.pred, self.objective, self.nodes = space, predictor, objective, nodes
        self.baseline, self.weight = dict(baseline), weight
        self.seen: list[tuple[dict[str, str], dict[str, float] | None, float | None]] = []  # (point, times, value)
        self._models: dict[str, Any] | None = None
        self._predicted: dict[tuple, dict[str, float]] = {}
        self.columns = [(d.name, label) for d in space.dimensions for label in d.labels]
        self.acting = {c: self._acting(c) for c in (*PHASES, VALUE)}

    # ---- what the analytical model says

    def canonical(self, labels: Mapping[str, str]) -> dict[str, str]:
        return canonical.canonical(self.space, labels, self.baseline, self.nodes)

    def predicted(self, labels: Mapping[str, str]) -> dict[str, float]:
        """The analytical model's phase times (s) and objective value of a point."""
        key = canonical.key(self.space, labels)
        if key not in self._predicted:
            flat = {**self.baseline, **self.space.point_settings(self.space.decode(dict(labels)))}
            t = self.pred.totals(predict.hint_overrides(flat, self.nodes), flat.get(predict.TRANSFER))
            out = {"write": t["write_time_s"], "read": t["read_time_s"]}
            if self.pred.by_objective:
                out[VALUE] = self.objective.of_totals(t)
            self._predicted[key] = out
        return self._predicted[key]

    # ---- what the runs say

    def observe(self, labels: Mapping[str, str], times: dict[str, float] | None, value: float | None) -> None:
        if times is None and (value is None or value <= 0):
            return
        self.seen.append((self.canonical(labels), times, value))
        self._models = None

    def components(self) -> tuple[str, ...]:
        """What the residuals are of: the phases when every run gave its phase times (and the objective is
        the totals'), else the objective value."""
        if self.pred.by_objective and self.seen and all(t is not None for _, t, _ in self.seen):
            return tuple(c for c in PHASES if any(t[c] > 0 for _, t, _ in self.seen))
        return (VALUE,)

    def residuals(self, component: str) -> tuple[list[list[float]], list[float]]:
        X, y = [], []
        for point, times, value in self.seen:
            measured = times[component] if component in PHASES and times else value
            guess = self.expected_plain(point, component)
            if measured is not None and measured > 0 and guess > 0:
                X.append(self.encode(point, component))
                # a run 20x slower than the rest of its point's (a burst of load) would outweigh every other
                y.append(max(-CLIP, min(CLIP, math.log(measured / guess))))
        return X, y

    def expected_plain(self, point: Mapping[str, str], component: str) -> float:
        """The analytical model's value of a component (without a prediction of the objective: the default's
        measured value stands for every point)."""
        p = self.predicted(point)
        if component in p:
            return p[component]
        base = [v for _, _, v in self.seen if v]
        return base[0] if base else 1.0

    def encode(self, point: Mapping[str, str], component: str = VALUE) -> list[float]:
        acting = self.acting[component]
        return [1.0 if point.get(name) == label else 0.0 for name, label in self.columns if name in acting]

    def _acting(self, component: str) -> set[str]:
        """The dimensions that can change a component: all, but for the writes when every write phase comes
        before every read phase, not those of read hints alone (a read cannot change a write made before it;
        a write can change the reads after it, which the writes' hints must stay in the reads' model for)."""
        names = {d.name for d in self.space.dimensions}
        if component != "write":
            return names
        phases = self.pred.rep.phases
        writes = [i for i, ph in enumerate(phases) if ph.get("bytes_written")]
        reads = [i for i, ph in enumerate(phases) if ph.get("bytes_read")]
        if not writes or not reads or max(writes) >= min(reads):
            return names
        return {d.name for d in self.space.dimensions if not (d.knobs() and d.knobs() <= READ_ONLY)}

    def models(self) -> dict[str, Any]:
        if self._models is None:
            from sklearn.gaussian_process import GaussianProcessRegressor
            from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel

            # one-hot points differing in m dimensions are 2m apart: RBF gives NEAR**m; the dot product of two
            # one-hot points counts the values they share: each value's own effect (a knob's main effect)
            length = math.sqrt(1.0 / -math.log(NEAR))
            self._models = {}
            for c in self.components():
                X, y = self.residuals(c)
                if not X:
                    continue
                kernel = (
                    ConstantKernel(LEVEL**2, "fixed")
                    + ConstantKernel(MAIN**2, "fixed") * DotProduct(0.0, "fixed")
                    + ConstantKernel(SCALE**2, "fixed") * RBF(length, "fixed")
                    + WhiteKernel(NOISE**2, "fixed")
                )
                self._models[c] = GaussianProcessRegressor(kernel, optimizer=None).fit(X, y)
        return self._models

    # ---- the corrected model

    def estimate(self, points: list[dict[str, str]], weight: float | None = None) -> list[float]:
        """Each point's objective as the corrected model predicts it, each phase `weight` deviations to the
        optimistic side (0: the corrected model's mean); higher is better (objective.key)."""
        w = self.weight if weight is None else weight
        comps = self.components()
        models = self.models()
        points = [self.canonical(p) for p in points]  # as the runs were learnt
        spread = {}
        for c in comps:
            if c in models:
                mean, sd = models[c].predict([self.encode(p, c) for p in points], return_std=True)
            else:
                mean, sd = (
                    [0.0] * len(points),
                    [math.sqrt(LEVEL**2 + MAIN**2 * len(self.space.dimensions) + SCALE**2)] * len(points),
                )
            spread[c] = (mean, sd)
        out = []
        for i, p in enumerate(points):
            if comps == (VALUE,):
                mean, sd = spread[VALUE][0][i], spread[VALUE][1][i]
                up = self.objective.key(1.0) > 0  # a higher value is better: optimism raises it
                value = self.expected_plain(p, VALUE) * math.exp(mean + (w if up else -w) * sd)
                out.append(self.objective.key(value))
                continue
            times = dict(self.predicted(p))
            for c in comps:
                mean, sd = spread[c][0][i], spread[c][1][i]
                times[c] = times[c] * math.exp(mean - w * sd)  # optimism: faster
            out.append(self.objective.key(self.score(times)))
        return out

    def score(self, times: dict[str, float]) -> float:
        """The objective of a run with these phase times, the bytes as the default's."""
        if not self.pred.by_objective:
            return sum(times[c] for c in PHASES)
        t = self.pred.rep.totals
        bw, br = t["bytes_written"], t["bytes_read"]
        mib = float(predict.MIB)
        tw, tr = max(times["write"], 1e-12), max(times["read"], 1e-12)
        return self.objective.of_totals(
            {
                "bytes_written": bw,
                "bytes_read": br,
                "write_time_s": tw,
                "read_time_s": tr,
                "write_bandwidth_mib_s": bw / mib / tw,
                "read_bandwidth_mib_s": br / mib / tr,
            }
        )

    def best(
        self, candidates: list[dict[str, str]], weight: float | None = None
    ) -> tuple[dict[str, str], float, float] | None:
        """The candidate to run next (by `weight` deviations of optimism, default the learner's), its optimistic
        score and the corrected model's mean score (objective.key)."""
        if not candidates:
            return None
        bound = self.estimate(candidates, weight)
        i = max(range(len(candidates)), key=lambda k: bound[k])
        mean = self.estimate([candidates[i]], 0.0)[0]
        return candidates[i], bound[i], mean
