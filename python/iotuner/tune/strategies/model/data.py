"""The study's measured points as the model sees them: each point's runs reduced to one value (`target`),
and that value as the model's response, a time, at the study's problem size (read from the default's run
report). Derived from the study's records only, so every worker fits on the same rows."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from ....settings import complete
from ...protocol import Context
from ...space import SearchSpace
from ...study.records import BASELINE, TRAINING, Record, canonical

MIB = 1024 * 1024


def key(ctx: Context, space: SearchSpace, point: Mapping[str, Any]) -> str:
    """A point ({dimension: value}) as the study keys the settings measured."""
    return canonical(complete(space.point_settings(point), ctx.store.config.nodes))


def scale(ctx: Context) -> dict[str, float]:
    """This study's problem size, from the default's run report: MiB moved per run and ranks."""
    for r in ctx.store.trials.records(BASELINE):
        d = r.attrs.get("details") or {}
        if r.ok and d.get("bytes_written") is not None:
            moved = (d.get("bytes_written") or 0) + (d.get("bytes_read") or 0)
            if moved > 0:
                return {"size_mib": moved / MIB, "ranks": float(d.get("ranks") or ctx.store.config.ranks)}
    return {}


def size_text(scale: Mapping[str, float]) -> str:
    return f"{scale['size_mib']:,.4g} MiB on {scale['ranks']:g} ranks"


def _megabytes(scale: Mapping[str, float]) -> float:
    """The data a run moves in MB (10^6 bytes, the objective's unit); 1 when unknown."""
    return scale["size_mib"] * MIB / 1e6 if scale.get("size_mib") else 1.0


def to_time(ctx: Context, value: float, scale: Mapping[str, float]) -> float:
    """The model's response: a time. A bandwidth becomes the time to move the run's data at it (seconds
    per MB when the size is unknown); an objective to minimize is one already."""
    return value if ctx.objective.direction == "minimize" else _megabytes(scale) / value


def to_value(ctx: Context, time: float, scale: Mapping[str, float]) -> float:
    return time if ctx.objective.direction == "minimize" else _megabytes(scale) / time


def reduce(ctx: Context, target: str, runs: list[float]) -> float:
    """A point's runs as one value: their median, or the fastest run (the paper's minimum time)."""
    if target == "median":
        return statistics.median(runs)
    return max(runs, key=ctx.objective.key)


def rows(ctx: Context, space: SearchSpace, target: str, trials: list[Record]) -> list:
    """The study's measured points (training, and these search trials), each reduced to one value."""
    from .features import point_of  # numpy: loaded when the model is first fitted
    from .saved import Row

    size = scale(ctx)
    runs: dict[str, list[float]] = {}
    points: dict[str, dict] = {}
    for r in ctx.store.trials.records(TRAINING) + list(trials):
        if not r.ok:
            continue
        p = point_of(space, r.settings)
        if p is None:
            continue
        points.setdefault(r.key, p)
        runs.setdefault(r.key, []).extend(r.runs)
    out = []
    for k, p in points.items():
        value = reduce(ctx, target, runs[k])
        if value > 0:
            out.append(Row(p, dict(size), value, to_time(ctx, value, size)))
    return out


def measured(ctx: Context, trials: list[Record]) -> set[str]:
    """The points measured before a round: its training and the trials of the rounds before (not the
    trials of the round itself, so a resumed worker makes the same list)."""
    return {r.key for r in ctx.store.trials.records(TRAINING)} | {r.key for r in trials}
