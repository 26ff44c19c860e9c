"""The hybrid model (Isaila et al., Cluster'15): every configuration predicted from the baseline run's access
pattern and this machine's calibration, the predicted top k run, the best measured kept.

Points are ranked by the study's objective, predicted (`predict.Predictor`): the baseline's measured phase
times moved by what the model predicts each setting changes, scored as the objective scores a run. An
objective the model cannot predict (read from the application's output) ranks by predicted I/O time, and the
study says so.

Options (--strategy-option): top=K (default 3), calibration=FILE (default: this machine's, from
`iotuner calibrate`), fallback=random (search at random when there is nothing to predict from, instead of
stopping). Dimensions whose knobs are not MPI-IO hints are held at the library's default (or their first
value): the model does not predict them. HDF5's transfer mode it does: independent transfers reach ROMIO as
independent calls.
"""

from __future__ import annotations

from ....perfmodel import predict
from ....perfmodel.calibration import CalibrationError
from ... import replay
from ...protocol import SAMPLER, Strategy
from ...space import library_default
from .. import register

FALLBACKS = ("random",)


@register(
    "hybrid",
    "ROMIO's operations counted from the baseline's access pattern, priced by `iotuner calibrate`; "
    "runs the predicted top k (default 3)",
)
class Hybrid(Strategy):
    def __init__(self, space, seed, options):
        super().__init__(space, seed, options)
        self.top = self.int_option("top", 3, least=1)
        self.fallback = self.options.get("fallback")
        if self.fallback is not None and self.fallback not in FALLBACKS:
            raise ValueError(f"strategy hybrid: fallback={self.fallback!r}: the only fallback is random")
        if not predict.modelled(space):
            raise ValueError(
                f"strategy hybrid: space {space.name} has no MPI-IO hint nor HDF5 transfer mode to "
                f"predict; use a space of ROMIO hints such as twophase or romio"
            )
        self.ranking = None  # [(predicted score, point)], best first
        self.proposed: list[dict] = []
        self.missing: str | None = None  # why nothing can be predicted
        self.calibration = None

    def fixed(self) -> dict[str, str]:
        out = {}
        for d in self.space.dimensions:
            if d.name in predict.modelled(self.space):
                continue
            default = library_default(d.knob) if d.knob else None
            out[d.name] = d.label(default) if default in d.values else d.labels[0]
        return out

    def predictor(self, ctx, report: dict):
        if self.calibration is None:
            self.calibration = replay.calibration_for(ctx.store.config, self.options.get("calibration"))
        return predict.Predictor(report, self.calibration, ctx.objective)

    def _rank(self, ctx) -> None:
        report = ctx.store.trials.baseline_report()
        try:
            pred = self.predictor(ctx, report) if report is not None else None
            self.missing = predict.nothing_to_predict(report, pred and len(pred.phases))
        except CalibrationError as e:  # a damaged or missing calibration: nothing to predict with, said why
            pred, self.missing = None, str(e)
        if self.missing:
            self.ranking = []
            ctx.note(
                f"hybrid: {self.missing}: "
                + (
                    "the points come from random sampling (fallback=random)"
                    if self.fallback
                    else "the search stops (--strategy-option fallback=random searches at random instead)"
                )
            )
            return
        ranked = predict.rank_points(self.space, pred, self.fixed())
        # points predicted alike make the same operations (a read hint in a program that only writes): the
        # first of each stands for them, so the k runs try k different behaviours
        self.ranking = []
        for score, point in ranked:
            if not self.ranking or predict.differs(score, self.ranking[-1][0]):
                self.ranking.append((score, point))
        what = (
            f"the predicted {ctx.objective.name}"
            if pred.by_objective
            else f"the predicted I/O time (objective {ctx.objective.name} cannot be predicted: {pred.why})"
        )
        best = ", ".join(predict.describe(s, ctx.objective) for s, _ in self.ranking[: self.top])
        ctx.note(
            f"hybrid: {len(ranked)} configurations predicted from {len(pred.phases)} phase(s), "
            f"{len(self.ranking)} different, ranked by {what}; the top {self.top}: {best}"
        )

    def explain(self, ctx, point):
        for score, p in self.ranking or ():
            if p == point:
                return f"hybrid: predicted {predict.describe(score, ctx.objective)}"
        return None

    def propose(self, ctx):
        if self.ranking is None:
            self._rank(ctx)
        if not self.ranking:
            return SAMPLER if self.fallback else None
        if len(self.proposed) >= min(self.top, len(self.ranking)):
            return None
        point = self.ranking[len(self.proposed)][1]
        self.proposed.append(point)
        return point

    def searched_size(self):
        return min(self.top, len(self.ranking)) if self.ranking else None

    def stop(self, ctx):
        if self.missing and not self.fallback:
            return f"hybrid: {self.missing}"
        if self.ranking and len(self.proposed) >= min(self.top, len(self.ranking)):
            return f"hybrid: the predicted top {len(self.proposed)} ran"
        return None
