"""Search strategies, one module or package each, on the strategy protocol (`..protocol`).

A strategy that is a few lines is a module (bayes, random, grid); a method
with internals of its own is a package that holds all of them: its code, its
command-line options (`Strategy.add_arguments`), its early stoppers
(`stop.register_stopper`) and its data (tunio: the picker, the learned
stopper, their pretraining and policies; model: the performance model;
hybrid: the hybrid model's strategy (the model is iotuner.perfmodel) and the ml baseline; ga:
its sampler). A module registers its strategy with `register(name,
description)`: on a `Strategy` subclass, or on a factory `(space, seed,
options) -> Optuna sampler` for a strategy that is only a sampler. Every
module and package here is found and imported, so a new strategy is one new
module or package; nothing else to edit. What a package's `__init__` imports
must stay light (no Optuna, NumPy, scikit-learn at import): `iotuner tune
--help` imports every strategy to list it with its options.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from typing import Any, Callable

from ...lazy import lazy
from .. import stop, stoppers  # noqa: F401  stoppers: the engine's early stoppers register on import
from ..protocol import SamplerStrategy, Strategy
from ..space import SearchSpace

optuna = lazy("optuna")

_REGISTRY: dict[str, type[Strategy]] = {}


def register(name: str, description: str) -> Callable:
    def deco(obj):
        if isinstance(obj, type) and issubclass(obj, Strategy):
            cls = obj
        else:  # a sampler factory
            cls = type(
                f"{obj.__name__}_strategy",
                (SamplerStrategy,),
                {"factory": staticmethod(obj), "__module__": obj.__module__},
            )
        cls.name, cls.description = name, description
        _REGISTRY[name] = cls
        return obj

    return deco


def modules() -> list[str]:
    """The strategy modules of this package: every module file in its directory."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def load() -> None:
    """Imports every strategy module and package: each registers its strategies (and stoppers) on import; with
    the engine's stoppers (imported above) every registration is done here.
    Importing is idempotent, so a module imported on its own before (a test, a benchmark) hides no other."""
    for mod in modules():
        importlib.import_module(f"{__name__}.{mod}")


def stopper_descriptions() -> dict[str, str]:
    """Every early stopper (--stop): the engine's and the strategies'."""
    load()
    return stop.stopper_descriptions()


def check_stopper(name: str | None) -> None:
    """ValueError for a --stop that no stopper answers to (None: the strategy's default)."""
    load()
    if name is not None and name not in stop.stopper_names():
        raise ValueError(f"unknown stopper '{name}': use {', '.join(stop.stopper_names())}")


def names() -> list[str]:
    load()
    return sorted(_REGISTRY)


def get(name: str) -> type[Strategy]:
    load()
    if name not in _REGISTRY:
        raise KeyError(f"unknown strategy '{name}': use {', '.join(names())}")
    return _REGISTRY[name]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Each strategy's own options, under a heading of its own."""
    for name in names():
        cls = _REGISTRY[name]
        if "add_arguments" in vars(cls):
            cls.add_arguments(p.add_argument_group(f"options of --strategy {name}", cls.description))


def options_from(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """The options of strategy `name` given as its own arguments; ValueError when another strategy's are given."""
    for other in names():
        cls = _REGISTRY[other]
        if other == name or "add_arguments" not in vars(cls):
            continue
        probe = argparse.ArgumentParser(add_help=False)
        cls.add_arguments(probe)
        given = [a.option_strings[0] for a in probe._actions if getattr(args, a.dest, None) is not None]
        if given:
            raise ValueError(f"{', '.join(given)}: options of --strategy {other}, not of --strategy {name}")
    return get(name).options_from(args)


def make(name: str, space: SearchSpace, seed: int, options: dict[str, Any] | None = None) -> Strategy:
    return get(name)(space, seed, dict(options or {}))


def distributions(space: SearchSpace) -> dict[str, optuna.distributions.CategoricalDistribution]:
    """The Optuna view of a space: one categorical per dimension, over value labels."""
    return {d.name: optuna.distributions.CategoricalDistribution(d.labels) for d in space.dimensions}


def sampler(name: str, space: SearchSpace, seed: int, options: dict[str, Any] | None = None, ctx=None):
    """A strategy's Optuna sampler on its own (tests, benchmarks without a study)."""
    return make(name, space, seed, options).sampler(ctx)
