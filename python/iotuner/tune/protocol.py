"""The strategy protocol: what a search method can do in a study.

A strategy is one class (or, for a plain Optuna sampler, one factory
function) registered under a name. The tuner drives it:

1. `prepare(ctx)`: runs of its own before the search (a training sweep,
   micro-benchmarks), made with `ctx.measure(point, kind="training")`. They
   are recorded as training runs, count in tuning time, RoTI and the run
   budget (`--runs`), and are shown apart in trials.csv and on the curve.
   With several workers one of them prepares while the others wait, and all
   see the records. `training_runs(repeats)` says how many it will make (the
   study says so when it starts); `fit_runs(runs, repeats)` sizes them to a
   run budget when the strategy's own options leave the size open.
2. `propose(ctx)`: the next point, or `SAMPLER` to let the strategy's Optuna
   sampler (`sampler(ctx)`) choose it for the new trial (`sample`), or None
   when the strategy has nothing more to try.
3. `observe(ctx, record, measurement)`: every run this worker makes (baseline,
   trial, training, confirmation), with its full run report
   (`measurement.report`: phases, settings read back, per-level counters).
4. `stop(ctx)`: a reason to end the search, or None; `searched_size()` and
   `searches(point)`: the size of the subspace it searches now and whether a
   point lies in it, for the exhaustion rule; `iteration_trials()`: how many
   trials make one iteration (a generation), for the early stoppers, and
   `default_stop`: the early stopper it uses unless the study says otherwise.
5. `add_arguments(group)` and `options_from(args)`: options of its own on the
   command line, under its own heading of `iotuner tune --help`.

Everything a strategy knows of the study it reads from `ctx.store` (records,
pools, current medians, the trajectory); it never writes there itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable

from ..lazy import lazy
from .space import SearchSpace

if TYPE_CHECKING:
    import optuna

    from .evaluate import Measurement
    from .store import Record, Store
else:
    optuna = lazy("optuna")  # only strategies that sample need it: `tune --help` does not

SAMPLER = object()  # propose(): the Optuna sampler chooses the point


class Context:
    """A strategy's view of the running study; the tuner provides it."""

    def __init__(
        self,
        store: Store,
        space: SearchSpace,
        objective,
        measure: Callable[..., tuple],
        note: Callable[[str], None],
        seed: int,
    ):
        self.store, self.space, self.objective, self.seed = store, space, objective, seed
        self._measure, self.note = measure, note

    def measure(
        self, point: Mapping[str, Any], kind: str = "training", label: str | None = None, why: str | None = None
    ) -> tuple[Record, Measurement]:
        """Runs the application once with the baseline and this point's settings ({dimension: value}, or flat
        {"layer.knob": value} settings with flat=True in the point's dict key "__flat__"); records the run.
        why: what the run is for, shown in trials.csv."""
        return self._measure(point, kind, label, why)

    def clock(self) -> float:
        return self.store.workers.clock()


class Strategy:
    """A search method. Subclass, set name and description, decorate with `strategies.register`."""

    name = ""
    description = ""
    default_stop: str | None = None  # the early stopper (stop.register_stopper) unless --stop says

    def __init__(self, space: SearchSpace, seed: int, options: Mapping[str, Any]):
        self.space, self.seed, self.options = space, seed, dict(options)

    def int_option(self, key: str, default: int, least: int = 0) -> int:
        """An integer option (`--strategy-option key=N`), or a message naming it."""
        value = self.options.get(key, default)
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"strategy {self.name}: {key}={value!r} is not a number") from None
        if number < least:
            raise ValueError(f"strategy {self.name}: {key} must be at least {least}")
        return number

    @classmethod
    def add_arguments(cls, group) -> None:
        """Options of its own for `iotuner tune` (argparse), shown under its own heading in --help."""

    @classmethod
    def options_from(cls, args) -> dict[str, Any]:
        """Its options (`self.options`, kept in the study) from those arguments: the ones given."""
        return {}

    def prepare(self, ctx: Context) -> None:
        """Training runs of its own, before the search."""

    def training_runs(self, repeats: int) -> int:
        """How many application runs `prepare` makes (each training point `repeats` times or once, as the
        strategy runs them), said when the study starts."""
        return 0

    def fit_runs(self, runs: int, repeats: int) -> str | None:
        """Sizes its training to a budget of this many application runs (the default's first runs already
        taken off), where its own options leave the size open; what it decided, when worth saying."""
        return None

    def sampler(self, ctx: Context) -> optuna.samplers.BaseSampler:
        """The Optuna sampler that proposes points when `propose` returns SAMPLER."""
        return optuna.samplers.RandomSampler(seed=self.seed)

    def propose(self, ctx: Context) -> Mapping[str, str] | object | None:
        """The next point as {dimension name: value label}, SAMPLER, or None when done."""
        return SAMPLER

    def explain(self, ctx: Context, point: Mapping[str, str]) -> str | None:
        """Why it proposed this point ({dimension: value label}), shown in trials.csv (a prediction, a rank)."""
        return None

    def observe(self, ctx: Context, record: Record, measurement: Measurement | None) -> None:
        """Every run this worker makes, with its run report."""

    def searched_size(self) -> int | None:
        """How many points the strategy searches now (None: the whole space)."""
        return None

    def searches(self, flat: Mapping[str, Any]) -> bool:
        """Whether a measured point (its flat settings) lies in the subspace the strategy searches now."""
        return True

    def iteration_trials(self) -> int:
        """How many search trials make one iteration, for the early stoppers (a generation; 1 by default)."""
        return 1

    def stop(self, ctx: Context) -> str | None:
        """Why the search should end now, or None."""
        return None


class SamplerStrategy(Strategy):
    """A strategy that is just an Optuna sampler (random, grid, bayes)."""

    factory: Callable[[SearchSpace, int, dict], optuna.samplers.BaseSampler]

    def sampler(self, ctx: Context) -> optuna.samplers.BaseSampler:
        return type(self).factory(self.space, self.seed, self.options)


def sample(
    study: optuna.Study,
    sampler: optuna.samplers.BaseSampler,
    trial: optuna.trial.FrozenTrial,
    distributions: Mapping[str, optuna.distributions.CategoricalDistribution],
    fixed: Mapping[str, Any] | None = None,
    system_attrs: Callable[[], Mapping[str, Any]] = dict,
) -> dict[str, Any]:
    """A new trial's point, drawn through the sampler's interface as Optuna's own ask draws it: before_trial,
    the relative search space and sample, then each remaining parameter on its own. Values in `fixed` (a
    point the strategy proposed) are taken as they are, and a sampler then samples only the others, each on
    its own. (after_trial is left out: no sampler here needs it, and the tuner records the outcome itself.)
    study: with every trial as of now (`StudyStorage.sampling_study`); system_attrs: what the sampler's
    before_trial wrote on the trial (a grid's cell), read when it has one."""
    fixed = dict(fixed or {})
    sampler.before_trial(study, trial)
    if type(sampler).before_trial is not optuna.samplers.BaseSampler.before_trial:
        trial.system_attrs.update(system_attrs())
    relative: dict[str, Any] = {}
    if not fixed:
        space = sampler.infer_relative_search_space(study, trial)
        relative = sampler.sample_relative(study, trial, space) if space else {}
    out = {}
    for name, dist in distributions.items():
        if name in fixed:
            value = fixed[name]
        elif name in relative and relative[name] in dist.choices:
            value = relative[name]
        else:
            value = sampler.sample_independent(study, trial, name, dist)
        trial.params[name], trial.distributions[name] = value, dist
        out[name] = value
    return out
