"""What earlier studies in the same storage learned: their measured points, when they searched the same space
for the same objective on a run like this one.

Two runs are alike when their run reports have the same number of ranks and bytes and typical requests
within a factor of 4 (Darshan-style signatures: what decides which settings help), or, without reports, when
they ran the same command. Each earlier study's values count relative to its own default's (tuning is about
the change a setting makes), placed on this study's default; the process gives them more noise than its own
runs.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from .prior import oriented

@dataclass
class Warm:
    study: str
    points: list[tuple[dict[str, str], float]]  # (point, value relative to that study's default, oriented log)


def signature(report: dict | None) -> tuple[int, float, float] | None:
    """(ranks, log2 bytes, log2 typical request) of a run report; None without one."""
    if not report:
        return None
    try:
        ranks = int(report["run"]["ranks"])
        t = report["totals"]
        moved = int(t["bytes_written"]) + int(t["bytes_read"])
        calls = 0
        for ph in report["phases"]:  # the application's calls, at the level it made them (HDF5, MPI-IO, POSIX)
            lv = ph.get(ph.get("data_level") or "posix") or {}
            calls += int(lv.get("write_calls", 0) or 0) + int(lv.get("read_calls", 0) or 0)
    except (KeyError, TypeError, ValueError):
        return None
    if moved <= 0:
        return None
    return ranks, math.log2(moved), math.log2(moved / max(1, calls))


def alike(a: dict | None, b: dict | None, command_a, command_b) -> bool:
    sa, sb = signature(a), signature(b)
    if sa is None or sb is None:
        return list(command_a) == list(command_b) and bool(command_a)
    return sa[0] == sb[0] and abs(sa[1] - sb[1]) <= 2 and abs(sa[2] - sb[2]) <= 2


def earlier(store, space, objective) -> list[Warm]:
    """The measured points of the earlier studies in this storage that are alike (see above)."""
    out = []
    from ...space import from_json
    mine = store.baseline_report()
    labels = [(d.name, d.labels) for d in space.dimensions]
    for other in store.others():
        c = other.config
        theirs = [(d.name, d.labels) for d in from_json(c.space).dimensions]
        if theirs != labels or c.objective.name != objective.name or c.objective.direction != objective.direction:
            continue
        if not alike(mine, other.baseline_report(), store.config.app, c.app):
            continue
        default = other.default_value()
        pools = [(space.labels_of(p.settings), p.median) for p in other.ranked_pools() if p.median]
        pools = [(pt, oriented(objective, v)) for pt, v in pools if pt is not None and v > 0]
        if not pools:
            continue
        base = oriented(objective, default) if default else statistics.median(y for _, y in pools)
        out.append(Warm(other.name, [(pt, y - base) for pt, y in pools]))
    return out
