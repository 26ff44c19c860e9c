"""What is known of a point before it runs: the hybrid model's prediction for the knobs it covers.

The hybrid model (`iotuner.perfmodel.predict.Predictor`) predicts the study's objective for the MPI-IO hints and
HDF5's transfer mode of a point, from the default's run report and the machine's calibration. The points it
ranks best, each a different predicted behaviour, with every other dimension as the default has it, are what
`auto` runs first. Without a report, a calibration or a dimension the model covers there is
no prior, and the reason is said.
"""

from __future__ import annotations

from ....perfmodel import predict
from ....perfmodel.calibration import CalibrationError
from ... import replay


class Prior:
    def __init__(self, space, predictor, covered: list[str], nodes: int, objective):
        self.space, self.predictor, self.covered, self.nodes, self.objective = (
            space,
            predictor,
            covered,
            nodes,
            objective,
        )

    def rank(self, default: dict[str, str], k: int) -> list[tuple[dict[str, str], str]]:
        """Its k best points, each predicted to behave differently from the ones before, every dimension it
        does not cover as in `default`; each with its prediction described."""
        fixed = {n: default[n] for n in default if n not in self.covered}
        out: list[tuple[tuple, dict[str, str]]] = []
        for score, point in predict.rank_points(self.space, self.predictor, fixed, self.nodes, default):
            if not out or predict.differs(score, out[-1][0]):
                out.append((score, point))
            if len(out) == k:
                break
        return [(point, f"predicted {predict.describe(score, self.objective)}") for score, point in out]


def model_prior(space, objective, report: dict | None, config, calibration: str | None) -> tuple[Prior | None, str]:
    """(the prior, or None; what it is, or why there is none)."""
    covered = predict.modelled(space)
    if not covered:
        return None, f"space {space.name} has no dimension the hybrid model predicts"
    if report is None and getattr(config, "synthetic", None) is not None:  # no job ran: no report is expected
        return None, "a synthetic objective runs no application, so there is no access pattern to predict from"
    why = predict.nothing_to_predict(report, 1)  # no report, or one of a run the model does not count
    if why:
        return None, why
    try:
        cal = replay.calibration_for(config, calibration)
    except CalibrationError as e:
        return None, str(e)  # names the file and the problem, and says to run `iotuner calibrate`
    pred = predict.Predictor(report, cal, objective)
    if not pred.phases:
        return None, predict.nothing_to_predict(report, 0)
    what = f"the predicted {objective.name}" if pred.by_objective else "the predicted I/O time"
    return Prior(space, pred, covered, config.nodes, objective), (
        f"{what} of the {len(covered)} dimension(s) the hybrid model covers, from the default's run report "
        f"({len(pred.phases)} modelled phase(s)) and the machine's calibration"
    )
