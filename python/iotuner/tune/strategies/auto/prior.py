"""What is known of a point before it runs: the hybrid model's prediction for the knobs it covers.

The hybrid model (`..hybrid.predict.Predictor`) predicts the study's objective for the MPI-IO hints and
HDF5's transfer mode of a point, from the default's run report and the machine's calibration. The points it
ranks best, each a different predicted behaviour, with every other dimension as the default has it, are what
`auto` runs first. Without a report, a calibration or a dimension the model covers there is nothing to rank,
and the reason is said.
"""

from __future__ import annotations

from typing import Callable

Rank = Callable[[dict[str, str], int], list[tuple[dict[str, str], str]]]


def model_prior(space, objective, report: dict | None, config, calibration: str | None) -> tuple[Rank | None, str]:
    """(a ranking: (the default's point, k) -> its k best points, each with its prediction described; or None,
    with what it is or why there is none)."""
    from ..hybrid import calibration as calibrations, predict
    covered = predict.modelled(space)
    if not covered:
        return None, f"space {space.name} has no dimension the hybrid model predicts"
    if report is None:
        return None, "the default's runs wrote no run report to predict from"
    try:
        cal = calibrations.for_study(config, calibration)
    except calibrations.CalibrationError as e:
        return None, f"no calibration ({e}; `iotuner calibrate` makes one)"
    pred = predict.Predictor(report, cal, objective)
    if not pred.phases:
        return None, "the default's run made no collective MPI-IO call to predict from"

    def rank(default: dict[str, str], k: int) -> list[tuple[dict[str, str], str]]:
        fixed = {n: default[n] for n in default if n not in covered}
        out: list[tuple[tuple, dict[str, str]]] = []
        for score, point in predict.rank_points(space, pred, fixed, config.nodes):
            if not out or predict.differs(score, out[-1][0]):
                out.append((score, point))
            if len(out) == k:
                break
        return [(point, f"predicted {predict.describe(score, objective)}") for score, point in out]

    what = f"the predicted {objective.name}" if pred.by_objective else "the predicted I/O time"
    return rank, (f"{what} of the {len(covered)} dimension(s) the hybrid model covers, from the default's run "
                  f"report ({len(pred.phases)} modelled phase(s)) and the machine's calibration")
