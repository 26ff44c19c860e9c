"""Uniform random sampling: the baseline every other strategy must beat."""

from ...lazy import lazy
from . import register

optuna = lazy("optuna")


@register("random", "uniform random points of the space")
def factory(space, seed, options):
    return optuna.samplers.RandomSampler(seed=seed)
