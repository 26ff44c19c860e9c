"""Genetic algorithms: H5Evolve's and TunIO's.

Generations are consecutive blocks of `population` search trials (the study's
trials are its search trials, so a trial's number is its place). Each
generation carries the best `elites` points found so far (elitism); every
other member is a child of two parents from the previous generation and the
elites, mixed gene by gene (uniform crossover), each gene then mutated with
probability `mutation` (`operators`).
- ga (TunIO): tournament selection: three random individuals, the best two
  are the parents.
- ga-h5evolve (H5Evolve): a larger population; parents drawn from the better
  half (truncation selection).

Fitness is each point's configuration as it stands now in the study (the
median of all its runs, `Results.current_values`). The population is read from
the study's records through the store's views (each trial's point from its
settings, `SearchSpace.labels_of`), so a resumed study continues the same
evolution; a child equal to a point already measured is bred again, since
re-measuring it would cost a run and teach nothing.
"""

from __future__ import annotations

import random
from typing import Any

from ...protocol import Strategy
from .. import register
from .operators import crossover, tournament


class _Genetic(Strategy):
    population, selection = 8, "tournament"

    def __init__(self, space, seed, options):
        super().__init__(space, seed, options)
        self.population = int(self.options.get("population", self.population))
        self.elites = int(self.options.get("elites", 1))
        self.mutation = float(self.options.get("mutation", max(0.1, 1.0 / len(space.dimensions))))
        if self.population < 3 or not 0 <= self.elites < self.population:
            raise ValueError("the population needs at least 3 members and fewer elites than members")

    def iteration_trials(self) -> int:
        return self.population

    def propose(self, ctx) -> dict[str, str]:
        index = len(ctx.store.trials.search_trials())  # the number the next trial gets
        rng = random.Random(f"{self.seed}:{index}")
        dims = self.space.dimensions
        now = ctx.store.results.current_values()  # a shared result counts with all its runs, as it stands now
        done = []  # (number, point, fitness: higher is better) of every completed trial
        for r in ctx.store.trials.completed():
            point = self.space.labels_of(r.settings)
            if point is not None and r.number in now:
                done.append((r.number, point, ctx.objective.key(now[r.number])))
        generation = index // self.population
        if generation == 0 or len(done) < 2:
            return {d.name: rng.choice(d.labels) for d in dims}
        ranked = sorted(done, key=lambda t: t[2], reverse=True)
        slot = index % self.population
        if slot < self.elites:
            return dict(ranked[slot][1])
        start = (generation - 1) * self.population
        previous = [t for t in done if start <= t[0] < start + self.population]
        pool = previous + [t for t in ranked[: self.elites] if t not in previous]
        if len(pool) < 2:
            pool = ranked[: self.population]
        seen = {tuple(t[1][d.name] for d in dims) for t in done}
        child: dict[str, Any] = {}
        for _ in range(20):
            (_, a, _), (_, b, _) = self.parents(pool, rng, lambda t: t[2])
            child = self.breed(a, b, rng)
            if tuple(child[d.name] for d in dims) not in seen:
                break
        return child

    def parents(self, pool, rng, fitness):
        """Two parents from pool; fitness: higher is better."""
        if self.selection == "tournament":
            return tournament(pool, rng, fitness)
        better = sorted(pool, key=fitness, reverse=True)[: max(2, len(pool) // 2)]  # H5Evolve: the better half
        return tuple(rng.sample(better, 2))

    def breed(self, a: dict, b: dict, rng) -> dict:
        """A child of two points ({dimension: value label})."""
        labels = {d.name: d.labels for d in self.space.dimensions}
        return crossover(a, b, list(labels), labels.__getitem__, self.mutation, rng)


@register("ga", "genetic algorithm as in TunIO: elitism, tournament of 3, uniform crossover, mutation")
class TunioGA(_Genetic):
    population, selection = 8, "tournament"


@register("ga-h5evolve", "genetic algorithm as in H5Evolve: population 15, elitism, truncation selection")
class H5EvolveGA(_Genetic):
    population, selection = 15, "truncation"
