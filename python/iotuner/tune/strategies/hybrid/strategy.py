"""The hybrid model (Isaila et al., Cluster'15): every configuration predicted from the baseline run's access
pattern and this machine's calibration, the predicted top k run, the best measured kept.

Options (--strategy-option): top=K (default 3), calibration=FILE (default: this machine's, from
`iotuner calibrate`). Dimensions whose knobs are not MPI-IO hints are held at the library's default (or their
first value): the model does not predict them.
"""

from __future__ import annotations

from ...protocol import SAMPLER, Strategy
from ...space import library_default
from .. import register


@register("hybrid", "ROMIO's operations counted from the baseline's access pattern, priced by `iotuner calibrate`; "
                    "runs the predicted top k (default 3)")
class Hybrid(Strategy):
    def __init__(self, space, seed, options):
        super().__init__(space, seed, options)
        try:
            self.top = int(self.options.get("top", 3))
        except ValueError:
            raise ValueError(f"strategy hybrid: top={self.options.get('top')!r} is not a number") from None
        if self.top < 1:
            raise ValueError("strategy hybrid: top must be at least 1")
        from .predict import modelled
        if not modelled(space):
            raise ValueError(f"strategy hybrid: space {space.name} has no MPI-IO hint to predict; use a space of "
                             f"ROMIO hints such as twophase or romio")
        self.report = None      # the baseline's run report
        self.ranking = None     # [(predicted seconds, point)], fastest first
        self.proposed: list[dict] = []
        self.calibration = None

    def fixed(self) -> dict[str, str]:
        from .predict import modelled
        out = {}
        for d in self.space.dimensions:
            if d.name in modelled(self.space):
                continue
            default = library_default(d.knob) if d.knob else None
            out[d.name] = d.label(default) if default in d.values else d.labels[0]
        return out

    def observe(self, ctx, record, measurement):
        if self.report is None and record.kind == "baseline" and measurement is not None and measurement.report:
            self.report = measurement.report

    def _rank(self, ctx) -> None:
        from . import calibration, predict
        self.calibration = calibration.Calibration.load(self.options.get("calibration"))
        phases = predict.phases_of(self.report)
        if not phases:
            ctx.note("hybrid: the baseline run made no collective MPI-IO call; nothing to predict, so the points "
                     "come from random sampling")
            self.ranking = []
            return
        ranked = predict.rank_points(self.space, phases, self.calibration, self.fixed())
        # points predicted alike make the same operations (a read hint in a program that only writes): the
        # first of each stands for them, so the k runs try k different behaviours
        self.ranking = []
        for t, point in ranked:
            if not self.ranking or abs(t - self.ranking[-1][0]) > 1e-3 * max(t, 1e-12):
                self.ranking.append((t, point))
        best = ", ".join(f"{t * 1e3:.1f} ms" for t, _ in self.ranking[:self.top])
        ctx.note(f"hybrid: {len(ranked)} configurations predicted from {len(phases)} phase(s), "
                 f"{len(self.ranking)} different; "
                 f"the top {self.top}: {best}")

    def propose(self, ctx):
        if self.ranking is None:
            if self.report is None:
                return SAMPLER  # no baseline report seen (another worker measured it): sample until one arrives
            self._rank(ctx)
        if not self.ranking:
            return SAMPLER
        if len(self.proposed) >= min(self.top, len(self.ranking)):
            return None
        point = self.ranking[len(self.proposed)][1]
        self.proposed.append(point)
        return point

    def searched_size(self):
        return min(self.top, len(self.ranking)) if self.ranking else None

    def stop(self, ctx):
        if self.ranking and len(self.proposed) >= min(self.top, len(self.ranking)):
            return f"hybrid: the predicted top {len(self.proposed)} ran"
        return None
