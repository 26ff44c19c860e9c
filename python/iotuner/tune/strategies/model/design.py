"""Training sets over a space's value lists (paper 001, section IV-B).

- `lhs` (default): a space-filling design. A Latin hypercube over the value
  indices of every dimension (scipy's, with its centred-discrepancy
  optimization): each dimension's values appear about equally often, and
  points spread over the whole space instead of clustering. The value lists
  are mostly powers of two already, so this spreads in log scale, as the
  paper's grids do.
- `halves`: the paper's heuristic, powers of two below the maximum: each
  numeric dimension keeps its largest value and the values nearest to its
  halves (max, max/2, max/4, ...), categorical ones keep every value; the
  product of those lists, or a Latin hypercube over them when it has more
  points than asked for.

A space no larger than the training set is measured whole.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import qmc

from ...space import SearchSpace
from .features import Encoding

DESIGNS = ("lhs", "halves")


def _lhs(lists: Sequence[Sequence[Any]], n: int, seed: int) -> list[tuple[int, ...]]:
    """n index tuples of a Latin hypercube over lists of these lengths, without repeats."""
    sizes = [len(v) for v in lists]
    total = math.prod(sizes)
    if total <= n:
        return [tuple(int(i) for i in np.unravel_index(k, sizes)) for k in range(total)]
    u = qmc.LatinHypercube(d=len(sizes), optimization="random-cd" if len(sizes) > 1 else None, seed=seed).random(n)
    picks: list[tuple[int, ...]] = []
    seen = set()
    for row in u:
        t = tuple(min(int(x * s), s - 1) for x, s in zip(row, sizes))
        if t not in seen:
            seen.add(t)
            picks.append(t)
    rng = random.Random(seed)
    while len(picks) < n:  # a discrete hypercube can repeat a point: fill with others at random
        t = tuple(rng.randrange(s) for s in sizes)
        if t not in seen:
            seen.add(t)
            picks.append(t)
    return picks


def halves(values: Sequence[float]) -> list[int]:
    """Indices of the values nearest (in log scale) to max, max/2, max/4, ... down to the smallest."""
    top, low = max(values), min(values)
    out: list[int] = []
    target = top
    while target >= low / 1.5:
        i = min(range(len(values)), key=lambda j: abs(math.log(values[j] / target)))
        if i not in out:
            out.append(i)
        target /= 2
    return sorted(out)


def training_set(space: SearchSpace, n: int, seed: int = 0, design: str = "lhs") -> list[dict[str, Any]]:
    """n points ({dimension: value}) of the space to train on."""
    if design not in DESIGNS:
        raise ValueError(f"unknown training design '{design}': use {' or '.join(DESIGNS)}")
    if n <= 0:
        return []
    lists: list[list[Any]] = []
    enc = Encoding(space) if design == "halves" else None
    for d in space.dimensions:
        if enc is not None and d.name in enc.numeric:
            lists.append([d.values[i] for i in halves(enc.numeric[d.name].numbers)])
        else:
            lists.append(list(d.values))
    return [{d.name: lst[i] for d, lst, i in zip(space.dimensions, lists, t)} for t in _lhs(lists, n, seed)]
