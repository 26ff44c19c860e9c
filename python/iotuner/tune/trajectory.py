"""Return on tuning investment and viability: pure functions of a study's trajectory.

The trajectory is the study's state after each run (`store.Point`): the
best configuration's median and the default's median, at each moment of
tuning time. From it:

- RoTI(t), TunIO's return on tuning investment: (perf_best(t) -
  perf_default(t)) / t, t in minutes, at every point of the trajectory. A
  point counts only once the default and the best configuration both have a
  median of at least `min_runs` runs (the study's --repeats), so one lucky
  first run cannot make the peak.
- the final RoTI: the confirmed gain (the winner's median minus the default's
  median, both in the confirmation round) over all the tuning time.
- the viability point (TunIO's lifecycle view, Fig. 12): the number of
  production runs after which the tuning time is paid back by the time the
  tuned settings save in each run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from .objective import Objective
from .store import Point


@dataclass(frozen=True)
class Roti:
    unit: str
    curve: tuple[tuple[float, float], ...]  # (tuning time s, RoTI) at every eligible point
    peak: float | None
    peak_at_s: float | None
    final: float | None  # the confirmed gain over all the tuning time (None: no confirmed gain)

    def to_json(self) -> dict:
        return {"unit": self.unit, "curve": [{"t_s": round(t, 3), "roti": r} for t, r in self.curve],
                "peak": self.peak, "peak_at_s": self.peak_at_s, "final": self.final}


def roti_curve(points: Sequence[Point], objective: Objective, min_runs: int = 1) -> list[tuple[float, float]]:
    """RoTI(t) after each run, where the default and the best configuration have at least min_runs runs."""
    out = []
    for p in points:
        if p.at_s <= 0 or p.best is None or p.default is None:
            continue
        if p.best_runs < min_runs or p.default_runs < min_runs:
            continue
        out.append((p.at_s, objective.improvement(p.best, p.default) / (p.at_s / 60)))
    return out


def roti(points: Sequence[Point], objective: Objective, min_runs: int, confirmed_gain: float | None,
         total_s: float) -> Roti:
    """RoTI along the trajectory, its peak, and the final RoTI of a confirmed gain (in the objective's unit)."""
    curve = roti_curve(points, objective, min_runs)
    peak = max(curve, key=lambda c: c[1]) if curve else None
    final = confirmed_gain / (total_s / 60) if confirmed_gain is not None and total_s > 0 else None
    return Roti(objective.roti_unit(), tuple(curve), peak[1] if peak else None, peak[0] if peak else None, final)


@dataclass(frozen=True)
class Viability:
    production_runtime_s: float | None  # one production run with the default settings
    io_share: float  # the part of it spent in the I/O that the settings speed up
    saved_per_run_s: float | None  # what the tuned settings save in each production run
    runs: int | None  # production runs after which tuning has paid for itself
    reason: str  # how it was computed, or why there is none

    def to_json(self) -> dict:
        return {"production_runtime_s": self.production_runtime_s, "io_share": self.io_share,
                "saved_per_run_s": self.saved_per_run_s, "runs": self.runs, "reason": self.reason}


def viability(tuning_s: float, gain: float | None, production_runtime_s: float | None,
              io_share: float = 1.0, source: str = "given") -> Viability:
    """The viability point: ceil(tuning time / time saved per production run).

    gain: the confirmed speed-up of the I/O (times faster; None or <= 1: no gain). A run of
    production_runtime_s spends io_share of it in that I/O, so the tuned settings save
    production_runtime_s * io_share * (1 - 1/gain) per run.
    """
    share = min(1.0, max(0.0, io_share))
    if production_runtime_s is None or production_runtime_s <= 0:
        return Viability(None, share, None, None, "no production run time: give --production-runtime")
    if gain is None or gain <= 1:
        return Viability(production_runtime_s, share, None, None, "no confirmed gain: tuning never pays back")
    saved = production_runtime_s * share * (1 - 1 / gain)
    if saved <= 0:
        return Viability(production_runtime_s, share, 0.0, None, "the I/O share of a run is zero: nothing to save")
    runs = max(1, math.ceil(tuning_s / saved))
    return Viability(production_runtime_s, share, saved, runs,
                     f"{tuning_s:.1f} s of tuning / {saved:.3g} s saved per run ({source} run time "
                     f"{production_runtime_s:.3g} s, {share:.0%} of it in I/O, {gain:.2f}x faster)")


def lifecycle(tuning_s: float, production_runtime_s: float, saved_per_run_s: float, runs: int
              ) -> list[tuple[int, float, float]]:
    """TunIO's Fig. 12: (n, tuning + n tuned runs, n untuned runs) for n = 0..runs, in seconds."""
    tuned = production_runtime_s - saved_per_run_s
    return [(n, tuning_s + n * tuned, n * production_runtime_s) for n in range(runs + 1)]


def costing_more(points: Sequence[Point], runs: Mapping[int, int], extra_s: float) -> list[Point]:
    """The trajectory as if every run but the confirmation's had cost extra_s more: what tuning the
    application itself would have taken where the search ran its I/O kernel (runs: a record's runs)."""
    out, n = [], 0
    for p in points:
        if p.kind != "confirmation":
            n += runs.get(p.number, 1)
        out.append(replace(p, at_s=p.at_s + n * extra_s))
    return out
