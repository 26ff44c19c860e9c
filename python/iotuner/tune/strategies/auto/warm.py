"""What earlier studies in the same storage learned: their best points, when they searched the same space for
the same objective on a run like this one.

Two runs are alike when their run reports have the same number of ranks, and bytes and typical request sizes
within a factor of 4 (a Darshan-style signature: what decides which settings help), or, without reports, when
they ran the same command. An earlier study's points count by their gain over its own default (tuning is about
the change a setting makes, and two runs of one application differ in level).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...space import from_json


@dataclass
class Warm:
    study: str
    points: list[tuple[dict[str, str], float]]  # (point, its gain over that study's default)


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
        return bool(command_a) and list(command_a) == list(command_b)
    return sa[0] == sb[0] and abs(sa[1] - sb[1]) <= 2 and abs(sa[2] - sb[2]) <= 2


def earlier(store, space, objective) -> list[Warm]:
    """The measured points of the earlier studies in this storage that are alike (see above)."""

    out = []
    mine = store.trials.baseline_report()
    labels = [(d.name, d.labels) for d in space.dimensions]
    for other in store.others():
        c = other.config
        if [(d.name, d.labels) for d in from_json(c.space).dimensions] != labels or (
            c.objective.name,
            c.objective.direction,
        ) != (objective.name, objective.direction):
            continue
        if not alike(mine, other.trials.baseline_report(), store.config.app, c.app):
            continue
        default = other.results.default_value()
        points = [(space.labels_of(p.settings), p.median) for p in other.results.ranked_pools() if p.median]
        points = [(pt, objective.gain(v, default)) for pt, v in points if pt is not None and default]
        if points:
            out.append(Warm(other.name, points))
    return out


def best(studies: list[Warm], k: int) -> list[tuple[dict[str, str], str, str]]:
    """The k points with the highest gains over their study's default: (point, study, how)."""
    ranked = sorted(((g, pt, w.study) for w in studies for pt, g in w.points), key=lambda t: -t[0])
    return [(pt, study, f"{g:.2f}x its default") for g, pt, study in ranked[:k]]
