"""Genetic algorithms: H5Evolve's and TunIO's.

Generations are consecutive blocks of `population` search trials (the study's
trials are its search trials, so a trial's number is its place). Each generation carries the best `elites` points found so far
(elitism); every other member is a child of two parents from the previous
generation and the elites, mixed gene by gene (uniform crossover), each gene
then mutated with probability `mutation`.
- ga (TunIO): tournament selection: three random individuals, the best two
  are the parents.
- ga-h5evolve (H5Evolve): a larger population; parents drawn from the better
  half (truncation selection).

Fitness is each point's configuration as it stands now in the study (the
median of all its runs, `Store.current_values`). The population is read back
from the study's records, so a resumed study continues the same evolution; a
child equal to a point already measured is mutated again, since re-measuring
it would cost a run and teach nothing.
"""

from __future__ import annotations

import random
from typing import Any, Callable

import optuna
from optuna.trial import TrialState

from ..protocol import Strategy
from . import distributions, register


def tournament(pool, rng, fitness):
    """TunIO's selection: three individuals at random, the best two (fitness: higher is better) are the
    parents."""
    contestants = sorted(rng.sample(list(pool), min(3, len(pool))), key=fitness, reverse=True)
    return contestants[0], contestants[1]


def crossover(a, b, genes, choices: Callable, mutation: float, rng) -> dict:
    """Uniform crossover of two parents' genes (a[gene], b[gene]), then each gene mutated with probability
    `mutation` to another of its `choices(gene)`."""
    child = {g: (a if rng.random() < 0.5 else b)[g] for g in genes}
    for g in genes:
        if rng.random() < mutation:
            others = [c for c in choices(g) if c != child[g]]
            child[g] = rng.choice(others or list(choices(g)))
    return child


class GeneticSampler(optuna.samplers.BaseSampler):
    def __init__(self, space, seed: int, population: int, elites: int, mutation: float, selection: str,
                 values: Callable[[], dict[int, float]] | None = None):
        if population < 3 or not 0 <= elites < population:
            raise ValueError("the population needs at least 3 members and fewer elites than members")
        self._dists = distributions(space)
        self._seed, self.population, self.elites = seed, population, elites
        self.mutation, self.selection = mutation, selection
        self._values = values
        self._independent = optuna.samplers.RandomSampler(seed=seed)

    def infer_relative_search_space(self, study, trial):
        return dict(self._dists)

    def sample_relative(self, study, trial, search_space) -> dict[str, Any]:
        if not search_space:
            return {}
        index = trial.number
        rng = random.Random(f"{self._seed}:{index}")
        done = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
                if t.value is not None and all(name in t.params for name in search_space)]
        generation = index // self.population
        if generation == 0 or len(done) < 2:
            return {name: rng.choice(dist.choices) for name, dist in search_space.items()}
        maximize = study.direction == optuna.study.StudyDirection.MAXIMIZE
        now = self._values() if self._values else {}  # a shared result counts with all its runs, as it stands now
        fitness = {t.number: (now.get(t.number, t.value) if maximize else -now.get(t.number, t.value)) for t in done}
        ranked = sorted(done, key=lambda t: fitness[t.number], reverse=True)
        slot = index % self.population
        if slot < self.elites:
            return {name: ranked[slot].params[name] for name in search_space}
        start = (generation - 1) * self.population
        previous = [t for t in done if start <= t.number < start + self.population]
        pool = previous + [t for t in ranked[: self.elites] if t not in previous]
        if len(pool) < 2:
            pool = ranked[: self.population]
        seen = {tuple(t.params[n] for n in search_space) for t in done}
        child = {}
        for _ in range(20):
            p1, p2 = self.parents(pool, rng, lambda t: fitness[t.number])
            child = self.breed(p1.params, p2.params, search_space, rng)
            if tuple(child[n] for n in search_space) not in seen:
                break
        return child

    def parents(self, pool, rng, fitness):
        """Two parents from pool; fitness: higher is better."""
        if self.selection == "tournament":
            return tournament(pool, rng, fitness)
        better = sorted(pool, key=fitness, reverse=True)[: max(2, len(pool) // 2)]  # H5Evolve: the better half
        return tuple(rng.sample(better, 2))

    def breed(self, a: dict, b: dict, search_space, rng) -> dict:
        return crossover(a, b, list(search_space), lambda name: search_space[name].choices, self.mutation, rng)

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self._independent.sample_independent(study, trial, param_name, param_distribution)


class _Genetic(Strategy):
    population, selection = 8, "tournament"

    def iteration_trials(self) -> int:
        return int(self.options.get("population", self.population))

    def sampler(self, ctx):
        mutation = float(self.options.get("mutation", max(0.1, 1.0 / len(self.space.dimensions))))
        return GeneticSampler(self.space, self.seed, population=int(self.options.get("population", self.population)),
                              elites=int(self.options.get("elites", 1)), mutation=mutation, selection=self.selection,
                              values=ctx.store.current_values if ctx else None)


@register("ga", "genetic algorithm as in TunIO: elitism, tournament of 3, uniform crossover, mutation")
class TunioGA(_Genetic):
    population, selection = 8, "tournament"


@register("ga-h5evolve", "genetic algorithm as in H5Evolve: population 15, elitism, truncation selection")
class H5EvolveGA(_Genetic):
    population, selection = 15, "truncation"
