"""The genetic operators of the GAs here and of TunIO's (`..tunio.impact.breed`): TunIO's tournament
selection, and uniform crossover with mutation."""

from __future__ import annotations

from typing import Callable


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
