"""Uniform random sampling: the baseline every other strategy must beat."""

import optuna

from . import register


@register("random", "uniform random points of the space")
def factory(space, seed, options):
    return optuna.samplers.RandomSampler(seed=seed)
