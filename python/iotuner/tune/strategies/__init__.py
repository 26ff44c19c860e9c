"""Search strategies, one module each, behind one small interface.

A strategy is a factory that returns an Optuna sampler for a search space:
the study (storage, resume, ask/tell) stays outside the algorithm, and every
dimension is a categorical choice over the labels of its values. Adding a
strategy (model-driven, hybrid, TunIO) is one module in this package that calls
`register`: every module here is found and imported, nothing else to edit.
"""

from __future__ import annotations

import importlib
import pkgutil
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


def register(name: str, description: str) -> Callable[[Factory], Factory]:
    def deco(factory: Factory) -> Factory:
        _REGISTRY[name] = Strategy(name, description, factory)
        return factory
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


def current_values(trials) -> dict[int, float]:
    """Each completed trial's value as it stands now: trials whose settings took effect alike
    (the same signature) share one result, the median of all their runs, which later runs
    update. Trials without recorded runs keep the value they were told."""
    import statistics
    runs: dict[str, list[float]] = {}
    for t in trials:
        sig = t.user_attrs.get("signature")
        if sig is not None and t.user_attrs.get("runs"):
            runs.setdefault(sig, []).extend(t.user_attrs["runs"])
    return {t.number: statistics.median(runs[t.user_attrs["signature"]]) if t.user_attrs.get("signature") in runs
            else t.value for t in trials}
