"""What is known of a point before it runs: the hybrid model's prediction for the knobs it covers.

The prior of a point is the predicted objective of its MPI-IO hints (the hybrid model's `Predictor`, from the
default's run report and this machine's calibration), on the log scale and oriented so that higher is better;
the other dimensions (HDF5, Lustre) do not move it. Without a report, a calibration or a modelled dimension
there is no prior, and the reason is said.
"""

from __future__ import annotations

import math
from typing import Callable

Prior = Callable[[dict[str, str]], float]


def oriented(objective, value: float) -> float:
    """A measured or predicted objective value on the scale the process models: log, higher is better."""
    return math.log(max(value, 1e-12)) * (1 if objective.direction == "maximize" else -1)


def model_prior(space, objective, report: dict | None, config, calibration: str | None) -> tuple[Prior | None, str]:
    """(the prior, or None; what it is, or why there is none)."""
    from ..hybrid import calibration as calibrations, predict
    modelled = predict.modelled(space)
    if not modelled:
        return None, f"space {space.name} has no MPI-IO hint the hybrid model predicts"
    if report is None:
        return None, "the default's runs wrote no run report to predict from"
    try:
        cal = calibrations.for_study(config, calibration)
    except calibrations.CalibrationError as e:
        return None, f"no calibration of this machine ({e}; `iotuner calibrate` makes one)"
    pred = predict.Predictor(report, cal, objective)
    if not pred.phases:
        return None, "the default's run made no collective MPI-IO call to predict from"

    def prior(point: dict[str, str]) -> float:
        flat = space.point_settings(space.decode({n: point[n] for n in modelled}))
        value, seconds = pred.score(predict.hint_overrides(flat, config.nodes))
        return oriented(objective, value) if value is not None else -math.log(max(seconds, 1e-12))

    what = f"the predicted {objective.name}" if pred.by_objective else "the predicted I/O time"
    return prior, (f"{what} of the {len(modelled)} MPI-IO dimension(s), from the default's run report "
                   f"({len(pred.phases)} modelled phase(s)) and this machine's calibration")
