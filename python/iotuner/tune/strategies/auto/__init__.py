"""The default strategy: what is known before a run, what earlier studies learned, and a Bayesian search for
the rest, so that few application runs reach a good point.

1. Prior (`prior.py`): the hybrid model's prediction of the study's objective for the MPI-IO hints of each
   point, from the default's run report and this machine's calibration (no training runs).
2. Warm start (`warm.py`): the points earlier studies in the same storage measured, when they searched the
   same space for the same objective on a run like this one.
3. A Gaussian process over the space (`gp.py`) whose mean is the prior (scaled to the measurements as they
   come) and which learns what no model covers (HDF5 alignment, chunking, metadata), with expected
   improvement choosing each next point among those not yet measured.

The first point is the prior's best with every other dimension as the default has it; without a prior nor
an earlier study, the search starts from the default's neighbourhood as the process's variance leads it.

Options (--strategy-option): calibration=FILE (default: this machine's), warm=no (ignore earlier studies),
candidates=N (points scored per proposal in spaces larger than that, default 20000).
"""

from __future__ import annotations

import random

from ...protocol import Strategy
from ...space import library_default
from .. import register

CANDIDATES = 20000
WARM_VARIANCE = 0.05  # of an earlier study's observation (log scale: about 22%), on top of the fitted noise


@register("auto", "the default: the hybrid model's predictions and earlier studies of similar runs as the prior "
                  "of a Gaussian process; expected improvement picks each next point")
class Auto(Strategy):
    def __init__(self, space, seed, options):
        super().__init__(space, seed, options)
        warm = str(self.options.get("warm", "yes")).lower()
        if warm not in ("yes", "no"):
            raise ValueError(f"strategy auto: warm={warm!r}: yes or no")
        self.warm = warm == "yes"
        try:
            self.candidates = int(self.options.get("candidates", CANDIDATES))
        except ValueError:
            raise ValueError(f"strategy auto: candidates={self.options.get('candidates')!r} is not a number") from None
        self.prior = None       # point -> prior value (oriented log), or None
        self.earlier = None     # [warm.Warm]
        self.scores: dict[tuple, tuple[float, float, float]] = {}  # point -> (posterior mean, sd, prior)
        self.ready = False

    # ---- what is known before the search ----

    def _setup(self, ctx) -> None:
        from . import prior, warm
        self.prior, what = prior.model_prior(self.space, ctx.objective, ctx.store.baseline_report(),
                                             ctx.store.config, self.options.get("calibration"))
        ctx.note(f"auto: prior: {what}" if self.prior else f"auto: no prior: {what}")
        self.earlier = warm.earlier(ctx.store, self.space, ctx.objective) if self.warm else []
        if self.earlier:
            n = sum(len(w.points) for w in self.earlier)
            ctx.note(f"auto: warm start from {n} point(s) of {len(self.earlier)} earlier study(ies) of a run like "
                     f"this one: {', '.join(w.study for w in self.earlier)}")
        self.ready = True

    def default_point(self, ctx) -> dict[str, str]:
        """The point the default runs, dimension by dimension: the baseline's value, else the library's
        default, else the dimension's first value."""
        from .... import settings
        flat = settings.flatten(ctx.store.config.baseline) if ctx.store.config.baseline else {}
        out = {}
        for d in self.space.dimensions:
            knobs = d.knobs()
            value = None
            for v, label in zip(d.values, d.labels):
                s = d.settings_of(v)
                if s and all(k in flat and d.label(flat[k]) == d.label(x) for k, x in s.items()):
                    value = label
            if value is None and d.knob:
                lib = library_default(d.knob)
                if d.knob not in flat and lib in d.values:
                    value = d.label(lib)
                elif d.knob not in flat and None in d.values:
                    value = d.label(None)
            if value is None and not (knobs & set(flat)) and None in d.values:
                value = d.label(None)
            out[d.name] = value if value is not None else d.labels[0]
        return out

    # ---- the search ----

    def _observed(self, ctx) -> list[tuple[dict[str, str], float]]:
        """This study's measured points and their values (oriented log), the default's among them."""
        from .prior import oriented
        out = []
        for p in ctx.store.ranked_pools():
            point = self.space.labels_of(p.settings)
            if point is not None and p.median and p.median > 0:
                out.append((point, oriented(ctx.objective, p.median)))
        default = ctx.store.default_value()
        if default and default > 0:
            out.append((self.default_point(ctx), oriented(ctx.objective, default)))
        return out

    def _candidates(self, ctx, measured: set[tuple]) -> list[dict[str, str]]:
        import itertools
        dims = self.space.dimensions
        names = [d.name for d in dims]
        if self.space.size() <= self.candidates:
            rows = itertools.product(*(d.labels for d in dims))
            return [dict(zip(names, r)) for r in rows if r not in measured]
        rng = random.Random(f"{self.seed}:{len(measured)}")
        out = {tuple(rng.choice(d.labels) for d in dims) for _ in range(self.candidates)}
        for (point, _) in sorted(self._observed(ctx), key=lambda t: -t[1])[:5]:  # the best ones' neighbours
            base = tuple(point[n] for n in names)
            for i, d in enumerate(dims):
                for label in d.labels:
                    out.add(base[:i] + (label,) + base[i + 1:])
        return [dict(zip(names, r)) for r in sorted(out) if r not in measured]

    def propose(self, ctx):
        from . import gp
        if not self.ready:
            self._setup(ctx)
        names = [d.name for d in self.space.dimensions]
        own = self._observed(ctx)
        measured = {tuple(p[n] for n in names) for p, _ in own}
        measured |= {tuple(p[n] for n in names) for p in
                     (self.space.labels_of(r.settings) for r in ctx.store.search_trials()) if p is not None}
        cands = self._candidates(ctx, measured)
        if not cands:
            return None
        prior = self.prior or (lambda point: 0.0)
        default = self.default_point(ctx)
        if self.prior is not None and len(own) <= 1 and not self.earlier:
            # the first point: the prior's best, changing only what the model covers
            from ..hybrid.predict import modelled
            covered = set(modelled(self.space))
            near = [c for c in cands if all(c[n] == default[n] for n in names if n not in covered)] or cands
            best = max(near, key=prior)
            self.scores[tuple(best[n] for n in names)] = (prior(best), 0.0, prior(best))
            return best
        obs = [(p, y, 0.0) for p, y in own]
        for w in self.earlier:
            base = next((y for p, y in own if p == default), 0.0)
            obs += [(p, base + y, WARM_VARIANCE) for p, y in w.points]
        if not obs:
            rng = random.Random(f"{self.seed}:first")
            return rng.choice(cands)
        X_obs = gp.encode(self.space, [p for p, _, _ in obs])
        y = [y for _, y, _ in obs]
        post = gp.posterior(X_obs, y, [v for _, _, v in obs], [prior(p) for p, _, _ in obs],
                            gp.encode(self.space, cands), [prior(c) for c in cands], self.seed)
        ei = gp.expected_improvement(post, max(y for _, y in own) if own else max(y))
        # ties (a flat process) go to the point nearest the default: one change at a time from what is known
        changed = [sum(c[n] != default[n] for n in names) for c in cands]
        i = max(range(len(cands)), key=lambda j: (round(float(ei[j]), 12), -changed[j], -j))
        self.scores[tuple(cands[i][n] for n in names)] = (float(post.mean[i]), float(post.std[i]), prior(cands[i]))
        return cands[i]

    def explain(self, ctx, point):
        import math
        got = self.scores.get(tuple(point[d.name] for d in self.space.dimensions))
        if got is None:
            return None
        mean, sd, _ = got
        value = math.exp(mean if ctx.objective.direction == "maximize" else -mean)
        if not sd:
            return f"auto: the hybrid model's best prediction, {value:,.4g} {ctx.objective.unit}"
        return f"auto: expected improvement's pick, predicted {value:,.4g} {ctx.objective.unit} (+-{sd:.0%})"
