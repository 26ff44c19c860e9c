"""A warm start (`--warm-start MODEL.json`): the saved model checked against this study, its data fitted again
with this study's when both are in the same units, and how well it predicted this study's first points."""

from __future__ import annotations

from collections.abc import Mapping

from ...protocol import Context
from ...space import SearchSpace
from ...tune_error import TuneError
from . import data


def load(path: str, space: SearchSpace):
    """The saved model (`saved.Saved`) at path, for a study of this space; ValueError when it cannot serve."""
    from . import saved  # numpy: loaded only for a warm start

    try:
        warm = saved.load(path)
    except saved.SavedModelError as e:
        raise ValueError(f"--warm-start: {e}") from None
    problems = saved.compatible(warm, warm.objective, {d.name for d in space.dimensions})
    if problems:
        raise ValueError(f"--warm-start {path}: {'; '.join(problems)}")
    return warm


def check(warm, ctx: Context, space: SearchSpace) -> None:
    """The saved model fits this study's objective and space (TuneError when not)."""
    from . import saved

    o = ctx.objective
    problems = saved.compatible(warm, {"name": o.name, "direction": o.direction}, {d.name for d in space.dimensions})
    if problems:
        raise TuneError(f"--warm-start {warm.path}: {'; '.join(problems)}")


def rows(warm, ctx: Context, scale: Mapping[str, float]) -> list:
    """The saved model's data, when its times are in this study's units (both studies know their
    problem size, or neither does)."""
    if warm is None:
        return []
    if bool(warm.scale) != bool(data.scale(ctx)):
        ctx.note(
            f"the study of {warm.path} and this one differ in knowing their problem size, so their "
            f"times are in different units: its data are not fitted again with this study's"
        )
        return []
    return list(warm.data)


def quality(warm, ctx: Context, enc, own) -> dict:
    """How well the warm-start model predicted this study's first measured points (said in a note)."""
    import numpy as np
    from scipy.stats import spearmanr

    table = enc.table([r.point for r in own], [r.scale for r in own])
    predicted = warm.model.predict(table)
    measured = np.array([r.time for r in own])
    ok = np.isfinite(predicted) & (predicted > 0)
    if ok.sum() < 2:
        return {"model": warm.path, "points": int(ok.sum())}
    mape = float(np.mean(np.abs(predicted[ok] - measured[ok]) / measured[ok]))
    rho = float(spearmanr(predicted[ok], measured[ok])[0]) if np.ptp(measured[ok]) > 0 else float("nan")
    ctx.note(
        f"warm start: {warm.path} predicted this study's first {int(ok.sum())} measured points "
        f"with a mean absolute error of {100 * mape:.1f}% and a rank correlation (Spearman) of {rho:.2f}"
    )
    return {"model": warm.path, "points": int(ok.sum()), "mape": mape, "spearman": rho}
