"""Return on tuning investment and viability: pure functions of a study's trajectory.

The trajectory is the study's state after each run (`store.Point`): the
best configuration's median and the default's median, at each moment of
tuning time. From it:

- RoTI(t), TunIO's return on tuning investment: (perf_best(t) -
  perf_default(t)) / t, t in minutes, at every point of the trajectory. A
  point counts only once the default and the best configuration both have a
  median of at least `min_runs` runs (the study's --repeats), so one lucky
  first run cannot make the peak, and there is no peak when no point beat the default.
- the final RoTI: the confirmed gain (the winner's median minus the default's
  median, both in the confirmation round) over all the tuning time.
- the viability point (TunIO's lifecycle view, Fig. 12): the number of
  production runs after which the tuning time is paid back by the time the
  tuned settings save in each run.
- the iterations (generations of a genetic algorithm, or single trials):
  the incumbent after each, what the early stoppers decide on.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from .objective import Objective
from .study.derive import Point
from .study.records import BASELINE, TRIAL


@dataclass(frozen=True)
class Roti:
    unit: str
    curve: tuple[tuple[float, float], ...]  # (tuning time s, RoTI) at every eligible point
    peak: float | None
    peak_at_s: float | None
    final: float | None  # the confirmed gain over all the tuning time (None: no confirmed gain)

    def to_json(self) -> dict:
        return {
            "unit": self.unit,
            "curve": [{"t_s": round(t, 3), "roti": r} for t, r in self.curve],
            "peak": self.peak,
            "peak_at_s": self.peak_at_s,
            "final": self.final,
        }


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


def roti(
    points: Sequence[Point], objective: Objective, min_runs: int, confirmed_gain: float | None, total_s: float
) -> Roti:
    """RoTI along the trajectory, its peak, and the final RoTI of a confirmed gain (in the objective's unit)."""
    curve = roti_curve(points, objective, min_runs)
    peak = max(curve, key=lambda c: c[1]) if curve else None
    if peak is not None and peak[1] <= 0:  # the search never beat the default: no return to peak
        peak = None
    final = confirmed_gain / (total_s / 60) if confirmed_gain is not None and total_s > 0 else None
    return Roti(objective.roti_unit(), tuple(curve), peak[1] if peak else None, peak[0] if peak else None, final)


@dataclass(frozen=True)
class Viability:
    production_runtime_s: float | None  # one production run with the default settings
    io_share: float  # the part of it on the objective's clock: the I/O that the settings speed up
    saved_per_run_s: float | None  # what the tuned settings save in each production run
    runs: int | None  # production runs after which tuning has paid for itself
    reason: str  # how it was computed, or why there is none

    def to_json(self) -> dict:
        return {
            "production_runtime_s": self.production_runtime_s,
            "io_share": self.io_share,
            "saved_per_run_s": self.saved_per_run_s,
            "runs": self.runs,
            "reason": self.reason,
        }


def viability(
    tuning_s: float,
    gain: float | None,
    production_runtime_s: float | None,
    io_share: float = 1.0,
    source: str = "given",
    clock: str = "I/O",
) -> Viability:
    """The viability point: ceil(tuning time / time saved per production run).

    gain: how many times faster the tuned settings make the seconds of a run that the objective is measured
    on (None or <= 1: no gain). A run of production_runtime_s spends io_share of it there (`clock` says what
    that is), so the tuned settings save production_runtime_s * io_share * (1 - 1/gain) per run.
    """
    share = min(1.0, max(0.0, io_share))
    if production_runtime_s is None or production_runtime_s <= 0:
        return Viability(None, share, None, None, "no production run time: give --production-runtime")
    if gain is None:
        return Viability(production_runtime_s, share, None, None, "no confirmed gain: tuning never pays back")
    if gain <= 1:
        why = f"the settings do not make {clock} faster ({gain:.2f}x): tuning never pays back"
        return Viability(production_runtime_s, share, None, None, why)
    saved = production_runtime_s * share * (1 - 1 / gain)
    if saved <= 0:
        return Viability(production_runtime_s, share, 0.0, None, f"no time of a run is in {clock}: nothing to save")
    runs = max(1, math.ceil(tuning_s / saved))
    return Viability(
        production_runtime_s,
        share,
        saved,
        runs,
        f"{tuning_s:.1f} s of tuning / {saved:.3g} s saved per run ({source} run time "
        f"{production_runtime_s:.3g} s, {share:.0%} of it in {clock}, made {gain:.2f}x faster)",
    )


def lifecycle(
    tuning_s: float, production_runtime_s: float, saved_per_run_s: float, runs: int | Sequence[int]
) -> list[tuple[int, float, float]]:
    """TunIO's Fig. 12: (n, tuning + n tuned runs, n untuned runs) in seconds, for n = 0..runs (or for the
    given ns)."""
    tuned = production_runtime_s - saved_per_run_s
    ns = range(runs + 1) if isinstance(runs, int) else runs
    return [(n, tuning_s + n * tuned, n * production_runtime_s) for n in ns]


def lifecycle_summary(tuning_s: float, v: Viability, planned: int | None) -> dict | None:
    """The lifecycle lines for summary.json and the plot: both are straight, so the points that matter (no
    runs, the viability point, the planned production runs, and twice the farther of them) say everything."""
    if v.runs is None or not v.saved_per_run_s or v.production_runtime_s is None:
        return None
    marks = sorted({0, v.runs, *([planned] if planned else []), max(2 * v.runs, planned or 0, 4)})
    return {
        "tuning_s": tuning_s,
        "tuned_run_s": v.production_runtime_s - v.saved_per_run_s,
        "untuned_run_s": v.production_runtime_s,
        "viability_runs": v.runs,
        "planned_runs": planned,
        "saved_at_planned_s": planned * v.saved_per_run_s - tuning_s if planned else None,
        "points": [
            {"runs": n, "tuned_total_s": t, "untuned_total_s": u}
            for n, t, u in lifecycle(tuning_s, v.production_runtime_s, v.saved_per_run_s, marks)
        ],
    }


@dataclass(frozen=True)
class Production:
    """One production run: its time with the default settings and the share of it on the objective's clock."""

    runtime_s: float | None
    io_share: float
    source: str  # "given" or "measured default"
    share_measured: bool = True  # False: no run said its time on the objective's clock, the whole run counts


def clock_seconds(records, whole_run: bool = False) -> list[float]:
    """Each successful run's seconds on the objective's clock (`Objective.clock_time`, kept in the record's
    details); whole_run: the run's wall time instead, for an objective read from the output."""
    out = []
    for r in records:
        d = (r.attrs.get("details") or {}) if r.ok else {}
        t = (d.get("wall_time_s") or r.duration_s) if whole_run else d.get("objective_time_s")
        if t is not None and t > 0:
            out.append(float(t))
    return out


def clock_gain(default_runs, tuned_runs, whole_run: bool = False) -> float | None:
    """How many times faster the tuned runs spent their time on the objective's clock than the default's
    runs (the medians of each; None: a side has no such time, as a synthetic objective's runs)."""
    base, tuned = clock_seconds(default_runs, whole_run), clock_seconds(tuned_runs, whole_run)
    if not base or not tuned:
        return None
    return statistics.median(base) / statistics.median(tuned)


def production(
    records, given_runtime_s: float | None, whole_run: bool = False, source: str | None = None
) -> Production:
    """From runs of the default (baseline records, or the confirmation round's runs of the default; `source`
    names them, else their kind does): the share of a run on the objective's clock (its seconds there over the
    run's wall time; 1 when nothing was measured, as for the synthetic objective, or for whole_run: an
    objective read from the output), and the given run time or the measured one."""
    records = [r for r in records if r.ok]
    details = [r.attrs.get("details") or {} for r in records]
    shares = [
        d["objective_time_s"] / d["wall_time_s"]
        for d in details
        if d.get("objective_time_s") is not None and d.get("wall_time_s")
    ]
    share = statistics.median(shares) if shares and not whole_run else 1.0
    measured = bool(shares) or whole_run
    if given_runtime_s is not None:
        return Production(given_runtime_s, share, "given", measured)
    walls = [d["wall_time_s"] for d in details if d.get("wall_time_s")] or [
        r.duration_s for r in records if r.duration_s > 0
    ]
    kind = source or (
        "measured default" if all(r.kind == BASELINE for r in records) else "measured default (application)"
    )
    return Production(statistics.median(walls) if walls else None, share, kind, measured)


def io_time_per_run(p: Production, objective: Objective, value: float, default: float) -> float:
    """The time one production run spends in the tuned I/O with settings worth `value`."""
    g = objective.gain(value, default)
    return (p.runtime_s or 0.0) * p.io_share / g if g > 0 else math.inf


# ---- iterations ----


@dataclass(frozen=True)
class Iteration:
    number: int  # iterations completed (1, 2, ...); 0 is the start, the default alone
    at_s: float  # tuning time when it completed
    incumbent: float  # the value a user would keep then: the best configuration's median, or the default's
    default: float


def iterations(points: Sequence[Point], size: int, objective: Objective) -> list[Iteration]:
    """The study after every `size` search trials (re-proposed points count, as in a generation), from the
    start (iteration 0, the default's first median) on. The incumbent is the best configuration's median as
    it stood then, or the default's when nothing beat it."""
    out: list[Iteration] = []
    trials = 0
    for p in points:
        if p.default is None:
            continue
        if not out:
            out.append(Iteration(0, p.at_s, p.default, p.default))
        if p.kind != TRIAL:
            continue
        trials += 1
        if trials % size == 0:
            best = p.best if p.best is not None and objective.better(p.best, p.default) else p.default
            out.append(Iteration(trials // size, p.at_s, best, p.default))
    return out


def costing_more(points: Sequence[Point], runs: Mapping[int, int], extra_s: float) -> list[Point]:
    """The trajectory as if every run but the confirmation's had cost extra_s more: what tuning the
    application itself would have taken where the search ran its I/O kernel (runs: a record's runs)."""
    out, n = [], 0
    for p in points:
        if p.kind != "confirmation":
            n += runs.get(p.record, 1)
        out.append(replace(p, at_s=p.at_s + n * extra_s))
    return out
