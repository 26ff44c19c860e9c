"""The performance model's part: every candidate's predicted effect, and the model's own best points.

The hybrid model (`iotuner.perfmodel.predict`) prices a run report's collective MPI-IO phases (and a shared HDF5
file's independent transfers) under other MPI-IO hints and HDF5 transfer modes with this machine's calibration.
It needs a run report (a Darshan log has no access pattern it counts), a calibration (`iotuner calibrate`) and a
phase it models; without one of them it is not evaluated, and the reason is said.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ..perfmodel import predict
from ..perfmodel.calibration import Calibration, CalibrationError

MODES = ("automatic", "enable", "disable")


class IoTime:
    """The objective advise predicts when no study gives one: the run's write and read time (less is better)."""

    name = "io-time"
    unit = "s"

    def of_totals(self, t: dict) -> float:
        return float(t["write_time_s"]) + float(t["read_time_s"])

    def key(self, value: float) -> float:
        return -value


@dataclass
class Model:
    predictor: predict.Predictor | None
    status: str  # "evaluated", "not evaluated"
    reason: str
    nodes: int = 1

    def score(self, flat: dict) -> tuple[float | None, float] | None:
        """(predicted objective or None, predicted I/O seconds) of flat settings; None without a model."""
        if self.predictor is None:
            return None
        return self.predictor.score(predict.hint_overrides(flat, self.nodes), flat.get(predict.TRANSFER))

    def baseline(self) -> tuple[float | None, float] | None:
        return None if self.predictor is None else self.predictor.score({}, None)

    def effect(self, flat: dict) -> float | None:
        """Predicted speed-up of the objective (>1 better) over the run as it was, None without a model."""
        s, b = self.score(flat), self.baseline()
        if s is None or b is None:
            return None
        objective = self.predictor.objective if self.predictor else None
        (v, t), (bv, bt) = s, b
        if v is not None and bv is not None and objective is not None:
            if objective.key(1.0) < 0:  # less is better (a time)
                return bv / v if v > 0 else None
            return v / bv if bv > 0 else None
        return bt / t if t > 0 else None

    def best_points(self, hdf5: bool, nprocs: int, k: int = 3) -> list[dict]:
        """The model's k best hint settings (each predicted to behave differently from the ones before) over
        collective buffering and data sieving per direction, aggregators and, for HDF5, the transfer mode."""
        if self.predictor is None:
            return []
        grid = {
            "mpiio.romio_cb_write": MODES,
            "mpiio.romio_cb_read": MODES,
            "mpiio.romio_ds_write": ("automatic", "disable"),
            "mpiio.romio_ds_read": ("automatic", "disable"),
            "mpiio.cb_nodes": tuple(n for n in (1, 2, 4) if n <= max(1, nprocs)),
        }
        if hdf5:
            grid[predict.TRANSFER] = ("independent", "collective")
        scored = []
        for values in itertools.product(*grid.values()):
            flat = dict(zip(grid, values))
            score = self.score(flat)
            if score is not None:
                changes = sum(1 for v in values if v not in ("automatic", "collective"))
                scored.append((self.predictor.sort_key(score), changes, score, flat))
        scored.sort(key=lambda x: (x[0], x[1]))
        out: list[tuple[tuple, dict]] = []
        for _, _, score, flat in scored:
            if not out or predict.differs(score, out[-1][0]):
                out.append((score, flat))
            if len(out) == k:
                break
        return [flat for _, flat in out]

    def space_points(self, space, default: dict[str, str], k: int = 3) -> list[tuple[dict, dict]]:
        """A study's view: the k best points of the dimensions the model covers (each predicted to behave
        differently from the ones before), every other dimension as in `default`; each as (the covered
        dimensions' flat settings, the point)."""
        if self.predictor is None:
            return []
        covered = predict.modelled(space)
        fixed = {n: default[n] for n in default if n not in covered}
        out: list[tuple[tuple, dict]] = []
        for score, point in predict.rank_points(space, self.predictor, fixed, self.nodes, default):
            if not out or predict.differs(score, out[-1][0]):
                out.append((score, point))
            if len(out) == k:
                break
        result = []
        for _, point in out:
            only = {n: point[n] for n in covered}
            result.append((space.point_settings(space.decode(only)), point))
        return result


def build(report: dict | None, calibration, objective=None, nodes: int = 1) -> Model:
    """The model of a run report: calibration is a Calibration, a path, or None for this machine's file."""
    why = predict.nothing_to_predict(report, 1)
    if why:
        return Model(None, "not evaluated", why, nodes)
    try:
        cal = calibration if isinstance(calibration, Calibration) else Calibration.load(calibration)
    except CalibrationError as e:
        return Model(None, "not evaluated", str(e), nodes)
    pred = predict.Predictor(report, cal, objective or IoTime())
    if not pred.phases:
        return Model(None, "not evaluated", predict.nothing_to_predict(report, 0) or "no phase to model", nodes)
    return Model(pred, "evaluated", f"{len(pred.phases)} modelled phase(s), priced by the machine's calibration", nodes)
