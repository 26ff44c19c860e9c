"""What is known before a run first, then a Bayesian search for the rest, so that few application runs reach
a good point.

1. Prior (`prior.py`): the hybrid model's prediction of the study's objective for the MPI-IO hints and HDF5's
   transfer mode of every point, from the default's run report and this machine's calibration (no training
   runs). Its best distinct predictions run first (`prior=K`, default 1), every other dimension as the default
   has it.
2. Warm start (`warm.py`): the best points earlier studies in the same storage measured (`warm=K`, default 2),
   when they searched the same space for the same objective on a run like this one.
3. Search: Optuna's multivariate TPE over the whole space (what no model covers: HDF5's alignment, chunking,
   metadata), which counts the runs above among its start-up trials and so needs fewer random ones of its own.

Options (--strategy-option): prior=K, warm=K (0: none), calibration=FILE (default: this machine's),
startup_trials=N (TPE's random start-up trials; default as bayes).
"""

from __future__ import annotations

from ....lazy import lazy
from ...protocol import SAMPLER, Strategy
from ...space import library_default
from .. import bayes, register

optuna = lazy("optuna")


@register("auto", "the hybrid model's best prediction and earlier studies' best points first, then multivariate "
                  "TPE")
class Auto(Strategy):
    def __init__(self, space, seed, options):
        super().__init__(space, seed, options)
        self.n_prior = self.int_option("prior", 1)
        self.n_warm = self.int_option("warm", 2)
        self.startup = self.int_option("startup_trials", bayes.startup_trials(space))
        self.first: list[tuple[dict[str, str], str]] | None = None  # the points known before the search, and why
        self.ran: list[dict[str, str]] = []  # those of them measured

    def sampler(self, ctx):
        # the runs before the search are finished trials TPE counts among its start-up ones: what is known
        # replaces random draws
        return optuna.samplers.TPESampler(seed=self.seed, multivariate=True, n_startup_trials=self.startup,
                                          constant_liar=True)

    # ---- what is known before the search ----

    def _first(self, ctx) -> list[tuple[dict[str, str], str]]:
        if self.first is None:
            self.first = self._known(ctx)
        return self.first

    def _known(self, ctx) -> list[tuple[dict[str, str], str]]:
        from . import prior, warm
        out: list[tuple[dict[str, str], str]] = []
        default = self.default_point(ctx)
        if self.n_prior:
            model, what = prior.model_prior(self.space, ctx.objective, ctx.store.baseline_report(),
                                            ctx.store.config, self.options.get("calibration"))
            ctx.note(f"auto: prior: {what}" if model else f"auto: no prior: {what}")
            if model:
                out += [(point, f"auto: the hybrid model's prediction, {described}")
                        for point, described in model.rank(default, self.n_prior)]
        if self.n_warm:
            earlier = warm.earlier(ctx.store, self.space, ctx.objective)
            best = warm.best(earlier, self.n_warm)
            if best:
                ctx.note(f"auto: warm start from {sum(len(w.points) for w in earlier)} point(s) of "
                         f"{len(earlier)} earlier study(ies) of a run like this one: "
                         f"{', '.join(w.study for w in earlier)}")
            out += [(p, f"auto: measured {how} in study {study}") for p, study, how in best]
        seen, unique = set(), []
        for point, why in out:
            key = tuple(point[d.name] for d in self.space.dimensions)
            if key not in seen:
                seen.add(key)
                unique.append((point, why))
        return unique

    def default_point(self, ctx) -> dict[str, str]:
        """The point the default runs, dimension by dimension: the baseline's value, else the library's
        default, else the dimension's first value."""
        from .... import settings
        flat = settings.flatten(ctx.store.config.baseline) if ctx.store.config.baseline else {}
        out = {}
        for d in self.space.dimensions:
            value = next((label for v, label in zip(d.values, d.labels) if d.settings_of(v) and all(
                k in flat and d.label(flat[k]) == d.label(x) for k, x in d.settings_of(v).items())), None)
            if value is None and not (d.knobs() & set(flat)):
                lib = library_default(d.knob) if d.knob else None
                value = d.label(lib) if lib in d.values else d.label(None) if None in d.values else None
            out[d.name] = value if value is not None else d.labels[0]
        return out

    # ---- the search ----

    def propose(self, ctx):
        pending = [p for p, _ in self._first(ctx) if p not in self.ran]
        if pending:
            # a trial's settings are completed with what each value implies: compare the points' labels
            measured = [self.space.labels_of(r.settings) for r in ctx.store.search_trials()]
            self.ran += [p for p in pending if p in measured]
            pending = [p for p in pending if p not in measured]
        return pending[0] if pending else SAMPLER

    def explain(self, ctx, point):
        return next((why for p, why in self._first(ctx) if p == point), None)
