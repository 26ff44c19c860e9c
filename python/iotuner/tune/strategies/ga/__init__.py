"""Genetic algorithms: H5Evolve's and TunIO's (the sampler that breeds them: `sampler`).

Generations are consecutive blocks of `population` search trials; each carries
the best `elites` points found so far, every other member is a child of two
parents. ga (TunIO) selects parents by a tournament of three, ga-h5evolve
(H5Evolve) from the better half of a larger population.
"""

from __future__ import annotations

from ...protocol import Strategy
from .. import register


class _Genetic(Strategy):
    population, selection = 8, "tournament"

    def iteration_trials(self) -> int:
        return int(self.options.get("population", self.population))

    def sampler(self, ctx):
        mutation = float(self.options.get("mutation", max(0.1, 1.0 / len(self.space.dimensions))))
        from .sampler import GeneticSampler
        return GeneticSampler(self.space, self.seed, population=int(self.options.get("population", self.population)),
                              elites=int(self.options.get("elites", 1)), mutation=mutation, selection=self.selection,
                              values=ctx.store.current_values if ctx else None)


@register("ga", "genetic algorithm as in TunIO: elitism, tournament of 3, uniform crossover, mutation")
class TunioGA(_Genetic):
    population, selection = 8, "tournament"


@register("ga-h5evolve", "genetic algorithm as in H5Evolve: population 15, elitism, truncation selection")
class H5EvolveGA(_Genetic):
    population, selection = 15, "truncation"
