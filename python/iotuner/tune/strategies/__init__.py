"""Search strategies, one module each, behind one small interface.

A strategy is a factory that returns an Optuna sampler for a search space:
the study (storage, resume, ask/tell) stays outside the algorithm, and every
dimension is a categorical choice over the labels of its values. Adding a
strategy (model-driven, hybrid, TunIO) is one module that calls `register`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

import optuna

from ..space import SearchSpace

Factory = Callable[[SearchSpace, int, dict[str, Any]], optuna.samplers.BaseSampler]


@dataclass(frozen=True)
class Strategy:
    name: str
    description: str
    factory: Factory


_REGISTRY: dict[str, Strategy] = {}
_MODULES = ("random", "grid", "ga", "bayes")


def register(name: str, description: str) -> Callable[[Factory], Factory]:
    def deco(factory: Factory) -> Factory:
        _REGISTRY[name] = Strategy(name, description, factory)
        return factory
    return deco


def _load() -> None:
    if not _REGISTRY:
        for mod in _MODULES:
            importlib.import_module(f"{__name__}.{mod}")


def names() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def get(name: str) -> Strategy:
    _load()
    if name not in _REGISTRY:
        raise KeyError(f"unknown strategy '{name}': use {', '.join(names())}")
    return _REGISTRY[name]


def sampler(name: str, space: SearchSpace, seed: int, options: dict[str, Any] | None = None):
    return get(name).factory(space, seed, dict(options or {}))


def distributions(space: SearchSpace) -> dict[str, optuna.distributions.CategoricalDistribution]:
    """The Optuna view of a space: one categorical per dimension, over value labels."""
    return {d.name: optuna.distributions.CategoricalDistribution(d.labels) for d in space.dimensions}
