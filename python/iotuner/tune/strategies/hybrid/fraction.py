"""A balanced fraction of a categorical space (the training design of the black-box `ml` strategy).

Each dimension's levels appear equally often (up to one) among the n points, combined by independent random
permutations: for two 3-level dimensions and n = 3 this is a Latin square, the 3^(2-1) fractional factorial
Isaila et al. trained on (3 of 9 configurations per instance)."""

from __future__ import annotations

import random


def balanced_fraction(levels: list[list[str]], n: int, seed: int = 0) -> list[tuple[str, ...]]:
    rng = random.Random(seed)
    columns = []
    for values in levels:
        col = []
        while len(col) < n:
            block = list(values)
            rng.shuffle(block)
            col += block
        columns.append(col[:n])
        rng.shuffle(columns[-1])
    points, seen = [], set()
    for row in zip(*columns):
        if row not in seen:  # a repeated combination adds no information: dropped
            seen.add(row)
            points.append(row)
    return points
