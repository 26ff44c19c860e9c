"""Search strategies, one module each, on the strategy protocol (`..protocol`).

A module registers its strategy with `register(name, description)`: on a
`Strategy` subclass, or on a factory `(space, seed, options) -> Optuna
sampler` for a strategy that is only a sampler. Every module in this package
is found and imported, so a new strategy is one new module; nothing else to
edit.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable

from ...lazy import lazy
from ..protocol import SamplerStrategy, Strategy
from ..space import SearchSpace

optuna = lazy("optuna")

_REGISTRY: dict[str, type[Strategy]] = {}


def register(name: str, description: str) -> Callable:
    def deco(obj):
        if isinstance(obj, type) and issubclass(obj, Strategy):
            cls = obj
        else:  # a sampler factory
            cls = type(f"{obj.__name__}_strategy", (SamplerStrategy,),
                       {"factory": staticmethod(obj), "__module__": obj.__module__})
        cls.name, cls.description = name, description
        _REGISTRY[name] = cls
        return obj
    return deco


def modules() -> list[str]:
    """The strategy modules of this package: every module file in its directory."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def _load() -> None:
    # each module registers itself on import; importing is idempotent, so a module
    # imported on its own before (a test, a benchmark) does not hide the others
    for mod in modules():
        importlib.import_module(f"{__name__}.{mod}")


def names() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def get(name: str) -> type[Strategy]:
    _load()
    if name not in _REGISTRY:
        raise KeyError(f"unknown strategy '{name}': use {', '.join(names())}")
    return _REGISTRY[name]


def make(name: str, space: SearchSpace, seed: int, options: dict[str, Any] | None = None) -> Strategy:
    return get(name)(space, seed, dict(options or {}))


def distributions(space: SearchSpace) -> dict[str, optuna.distributions.CategoricalDistribution]:
    """The Optuna view of a space: one categorical per dimension, over value labels."""
    return {d.name: optuna.distributions.CategoricalDistribution(d.labels) for d in space.dimensions}


def sampler(name: str, space: SearchSpace, seed: int, options: dict[str, Any] | None = None, ctx=None):
    """A strategy's Optuna sampler on its own (tests, benchmarks without a study)."""
    return make(name, space, seed, options).sampler(ctx)
