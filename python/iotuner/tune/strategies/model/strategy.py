"""Model-driven tuning (Behzad, Byna, Wild, Prabhat, Snir, Cluster'15).

1. Train: run a designed training set (`training` points, each `--repeats`
   times; `design` lhs or halves, see design.py).
2. Fit: a linear combination of basis terms, products of the numeric knobs
   (and the problem size) with exponents in {-1, 0, 1} and categorical
   indicators, chosen by forward selection with cross-validation
   (fit.py). Each point's runs are reduced to one value, `target`:
   `min`, the paper's minimum time, i.e. the fastest run (for a bandwidth,
   its highest: the run least disturbed by others), or `median`.
3. Predict every configuration, run the `top_k` best (search trials, each
   with its prediction in trials.csv); the tuner keeps the best measured and
   confirms it.
4. With `refit`: fit again on everything measured, run the next top k, and
   again while a round improves on the best before it beyond the default's
   measured noise (section IV-C).

The fitted model is printed as an equation and saved with its data in
OUT/model.json; `warm_start` (a model.json) starts a study from it, with
`training` 0 by default: the saved model predicts at this study's problem
size, or, with a few training runs here, is fitted again on its data and
these (the problem size then varies, so it can enter the model).

Everything is derived from the study's records, so a resumed or second
worker makes the same fits and proposals.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...protocol import Context, Strategy
from ...study.records import TRAINING, Record
from .. import register
from . import data, warm_start

DEFAULT_TRAINING, DEFAULT_TOP_K = 40, 20
TARGETS = ("min", "median")
OPTIONS = ("training", "top_k", "refit", "warm_start", "target", "design")


@dataclass
class Round:
    number: int
    picks: list[tuple[dict[str, Any], float]]  # (point, predicted value in the objective's unit), best first
    model: Any  # model.Model
    predicted: int  # configurations predicted (of the dimensions the model uses)
    method: str
    space_size: int  # configurations of the whole space
    empty: str = "model: every configuration it ranks was measured"  # why it has no picks


@register(
    "model",
    "model-driven (Behzad et al., Cluster'15): train, fit a regression, predict every configuration, run the top k",
)
class ModelDriven(Strategy):
    @classmethod
    def add_arguments(cls, g) -> None:
        g.add_argument(
            "--training",
            type=int,
            metavar="N",
            help=f"training points, run before the search (default {DEFAULT_TRAINING}; 0 with --warm-start)",
        )
        g.add_argument(
            "--top-k", type=int, metavar="K", help=f"predicted best configurations to run (default {DEFAULT_TOP_K})"
        )
        g.add_argument(
            "--refit",
            action="store_true",
            default=None,
            help="after the top k, fit again on everything measured and run the next top k, while that "
            "improves on the best",
        )
        g.add_argument(
            "--warm-start",
            metavar="MODEL.json",
            help="start from a saved model (OUT/model.json of another study of the same application "
            "and space, e.g. at another problem size)",
        )
        g.add_argument(
            "--model-target",
            choices=TARGETS,
            help="each point's runs reduced to: min, the fastest run (the paper's minimum time; for a "
            "bandwidth its highest value), or their median (default min)",
        )
        g.add_argument(
            "--design",
            choices=("lhs", "halves"),
            help="training set: lhs, a space-filling Latin hypercube over the value lists (default), or "
            "halves, the largest value and its halves",
        )

    @classmethod
    def options_from(cls, args) -> dict[str, Any]:
        given = {
            "training": args.training,
            "top_k": args.top_k,
            "refit": args.refit,
            "warm_start": args.warm_start and str(Path(args.warm_start).resolve()),
            "target": args.model_target,
            "design": args.design,
        }
        return {k: v for k, v in given.items() if v is not None}

    def __init__(self, space, seed, options):
        super().__init__(space, seed, options)
        o = self.options
        unknown = sorted(set(o) - set(OPTIONS))
        if unknown:
            raise ValueError(f"strategy model: unknown option(s) {', '.join(unknown)}")
        self.warm = warm_start.load(o["warm_start"], space) if o.get("warm_start") else None
        self.training = int(o.get("training", 0 if self.warm else DEFAULT_TRAINING))
        self.top_k = int(o.get("top_k", DEFAULT_TOP_K))
        self.refit = bool(o.get("refit", False))
        self.target = str(o.get("target", "min"))
        self.design = str(o.get("design", "lhs"))
        if self.training < 0 or self.top_k < 1:
            raise ValueError("--training must be 0 or more and --top-k at least 1")
        if self.target not in TARGETS:
            raise ValueError(f"--model-target must be {' or '.join(TARGETS)}, not {self.target!r}")
        if self.design not in ("lhs", "halves"):
            raise ValueError(f"--design must be lhs or halves, not {self.design!r}")
        if not self.warm and self.training < 4:
            raise ValueError("the model needs at least 4 training points (--training), or a --warm-start model")
        self._rounds: dict[int, Round | None] = {}
        self._encoding = None
        self._failed: str | None = None
        self.warm_quality: dict | None = None
        self._final_saved = False

    # ---- training ----

    def training_runs(self, repeats: int) -> int:
        return self.training * repeats

    def fit_runs(self, runs: int, repeats: int) -> str | None:
        if "training" in self.options or self.warm is not None:
            return None
        room = runs // max(1, repeats) - self.top_k
        self.training = max(4, min(DEFAULT_TRAINING, room))
        if self.training < DEFAULT_TRAINING:
            return (
                f"model: {self.training} training points, so that they and the top {self.top_k} fit the "
                f"run budget of {runs + repeats} application runs"
                + ("" if room >= 4 else " as far as they can (the model needs 4): the top k get what is left")
            )
        return None

    def prepare(self, ctx: Context) -> None:
        from . import design

        if self.warm is not None:
            warm_start.check(self.warm, ctx, self.space)
        points = design.training_set(self.space, self.training, self.seed, self.design)
        repeats = ctx.store.config.repeats
        done: dict[str, int] = {}
        for r in ctx.store.trials.records(TRAINING):  # training a stopped worker began: not run again
            done[r.key] = done.get(r.key, 0) + 1
        for i, p in enumerate(points):
            key = data.key(ctx, self.space, p)
            for rep in range(done.get(key, 0), repeats):
                ctx.measure(
                    self.space.point_settings(p),
                    why=f"training point {i + 1} of {len(points)} ({self.design})"
                    + (f", run {rep + 1} of {repeats}" if repeats > 1 else ""),
                )

    # ---- what the study knows ----

    def rows(self, ctx: Context, trials: list[Record]) -> list:
        """The study's measured points (training, and these search trials), each reduced to one value."""
        return data.rows(ctx, self.space, self.target, trials)

    def _enc(self):
        if self._encoding is None:
            from .features import Encoding

            self._encoding = Encoding(self.space)
        return self._encoding

    # ---- the rounds ----

    def _round(self, ctx: Context, number: int, data_trials: list[Record]) -> Round | None:
        if number in self._rounds:
            return self._rounds[number]
        from . import fit, rank
        from .fitted import FitError

        enc = self._enc()
        own = self.rows(ctx, data_trials)
        scale = data.scale(ctx)
        if self.warm is not None and not scale and self.warm.scale:
            scale = dict(self.warm.scale)
            ctx.note(
                "this study's runs report no problem size: the warm-start model predicts at its own "
                f"({data.size_text(scale)})"
            )
        rows = warm_start.rows(self.warm, ctx, scale) + own
        try:
            if self.warm is not None and not own:
                model = self.warm.model  # nothing measured here yet: the saved model as it is
            else:
                table = enc.table([r.point for r in rows], [r.scale for r in rows])
                model = fit.select(
                    table, [r.time for r in rows], enc.candidates(table), seed=self.seed, legend=enc.legend()
                )
        except FitError as e:
            self._failed = f"model: cannot fit ({e})"
            ctx.note(self._failed)
            self._rounds[number] = None
            return None
        if self.warm is not None and own and self.warm_quality is None:
            self.warm_quality = warm_start.quality(self.warm, ctx, enc, own)
        best = max(own or rows, key=lambda r: ctx.objective.key(r.value), default=None)
        reference = dict(best.point) if best else {d.name: d.values[0] for d in self.space.dimensions}
        measured = data.measured(ctx, data_trials)
        ranking = rank.top(
            model,
            enc,
            self.top_k,
            reference,
            scale,
            skip=lambda p: data.key(ctx, self.space, p) in measured,
            seed=self.seed,
        )
        picks = [(p, data.to_value(ctx, t, scale)) for p, t in ranking.points]
        rnd = Round(number, picks, model, ranking.predicted, ranking.method, ranking.space_size)
        self._rounds[number] = rnd
        self._announce(ctx, rnd, rows, scale, ranking)
        self._save(ctx, rnd, rows, scale)
        return rnd

    def _announce(self, ctx: Context, rnd: Round, rows, scale, ranking) -> None:
        warm_rows = len(warm_start.rows(self.warm, ctx, scale))
        what = (
            "the saved model"
            if self.warm is not None and rnd.model is self.warm.model
            else f"fitted on {len(rows)} measured points"
            + (f", {warm_rows} of them from {self.warm.path}" if warm_rows else "")
        )
        o = ctx.objective
        unit = o.unit
        text = [f"model, round {rnd.number} ({what}):", "  " + rnd.model.describe().replace("\n", "\n  ")]
        if o.direction == "minimize":
            text.append(f"  t = the objective {o.name}" + (f" ({unit})" if unit else ""))
        elif scale:
            text.append(f"  t = seconds to move a run's data ({data.size_text(scale)}) at the {o.name}")
        else:
            text.append(f"  t = 1 / {o.name} (the runs report no problem size)")
        if not rnd.model.terms:
            text.append(
                f"  no term predicts the measured points better than their mean: every configuration is "
                f"predicted the same, so the top {self.top_k} are the nearest neighbours of the best measured "
                f"one (more training points, --training, may show which knobs matter)"
            )
        how = "all" if ranking.method == "exhaustive" else f"{ranking.predicted:,} (coordinate descent on the model)"
        text.append(
            f"  predicted {how} of {ranking.space_size:,} configurations"
            + (f" ({ranking.invalid:,} with a time below zero left out)" if ranking.invalid else "")
        )
        if rnd.picks:
            text.append(
                f"  the top {len(rnd.picks)} not yet measured: predicted {rnd.picks[0][1]:,.4g} to "
                f"{rnd.picks[-1][1]:,.4g} {unit}".rstrip()
            )
        ctx.note("\n".join(text))

    def _save(self, ctx: Context, rnd: Round, rows, scale) -> None:
        out = ctx.store.config.out
        if not out:
            return
        from .saved import Saved

        o = ctx.objective
        doc = Saved(
            rnd.model,
            {"name": o.name, "direction": o.direction, "unit": o.unit},
            self.space.to_json(),
            self.target,
            dict(scale),
            list(rows),
            ctx.store.name,
            self.warm_quality,
        )
        try:
            doc.save(Path(out) / "model.json")
        except OSError as e:
            ctx.note(f"cannot save the model to {Path(out) / 'model.json'}: {e.strerror}")

    def _plan(self, ctx: Context) -> tuple[str, Any]:
        """("propose", (round, index in it)) or ("stop", reason), from the study's records."""
        trials = ctx.store.trials.search_trials()
        start, number = 0, 0
        while True:
            rnd = self._round(ctx, number, trials[:start])
            if rnd is None:
                return "stop", self._failed
            if len(trials) < start + len(rnd.picks):
                return "propose", (rnd, len(trials) - start)
            if not rnd.picks:
                return "stop", rnd.empty
            done = trials[: start + len(rnd.picks)]
            if self.warm is not None and self.warm_quality is None:
                # no training here: its first points are these
                self.warm_quality = warm_start.quality(self.warm, ctx, self._enc(), self.rows(ctx, done))
            reason = self._finished(ctx, rnd, trials, start)
            if reason:
                if not self._final_saved:  # the model of the last round, with everything measured
                    self._final_saved = True
                    scale = data.scale(ctx) or (dict(self.warm.scale) if self.warm else {})
                    self._save(ctx, rnd, warm_start.rows(self.warm, ctx, scale) + self.rows(ctx, done), scale)
                return "stop", reason
            start += len(rnd.picks)
            number += 1

    def _finished(self, ctx: Context, rnd: Round, trials: list[Record], start: int) -> str | None:
        """Why no round follows this one (None: refit and run the next top k)."""
        k = len(rnd.picks)
        if not self.refit:
            return f"model: ran the top {k} predicted configurations"
        if rnd.number == 0:
            return None  # the refit
        from ... import noise

        key = ctx.objective.key

        def best(records) -> float | None:
            values = [statistics.median(r.runs) for r in records if r.ok]
            return max(values, key=key) if values else None

        before = best(ctx.store.trials.records(TRAINING) + trials[:start])
        now = best(trials[start : start + k])
        margin = noise.relative_spread(ctx.store.results.default_runs)
        if now is not None and (before is None or key(now) - key(before) > margin * abs(before)):
            return None
        return (
            f"model: refit round {rnd.number} did not improve on the best measured before it beyond the "
            f"default's noise ({100 * margin:.1f}%)"
        )

    # ---- the protocol ----

    def propose(self, ctx: Context) -> Mapping[str, str] | None:
        what, detail = self._plan(ctx)
        if what == "stop":
            return None
        rnd, i = detail
        point = rnd.picks[i][0]
        return {d.name: d.label(point[d.name]) for d in self.space.dimensions}

    def explain(self, ctx: Context, point: Mapping[str, str]) -> str | None:
        for rnd in sorted((r for r in self._rounds.values() if r), key=lambda r: -r.number):
            for i, (p, value) in enumerate(rnd.picks):
                if {d.name: d.label(p[d.name]) for d in self.space.dimensions} == dict(point):
                    among = (
                        f"{rnd.space_size:,} configurations"
                        if rnd.method == "exhaustive"
                        else f"{rnd.predicted:,} predicted by coordinate descent"
                    )
                    return (
                        f"model round {rnd.number}: rank {i + 1} of {among}, predicted "
                        f"{value:,.4g} {ctx.objective.unit}".rstrip()
                    )
        return None

    def stop(self, ctx: Context) -> str | None:
        what, detail = self._plan(ctx)
        return detail if what == "stop" else None
