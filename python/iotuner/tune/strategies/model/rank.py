"""Every configuration predicted, the best k returned (paper 001, section IV:
"predict I/O performance for an exhaustive set of all combinations").

Only the dimensions the model's terms use are enumerated: the others cannot
change a prediction. Among equal predictions the configuration nearest a
reference point (the best configuration measured) comes first: the knobs the
model does not use keep its values, then change one at a time, two, ...
Up to `LIMIT` combinations are predicted all, in blocks of `BLOCK`. Beyond,
the model is optimized instead: coordinate descent (each dimension in turn
set to its best value with the others held) from the reference point and
`STARTS` random points, and the best k of every point it evaluated are
returned.

Predicted times that are not positive are where a linear model extrapolates
beyond its data: those configurations are left out, and counted.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .features import Encoding
from .fitted import Model

LIMIT = 10**7
BLOCK = 1 << 20
STARTS = 64


@dataclass
class Ranking:
    points: list[tuple[dict[str, Any], float]]  # (point, predicted time), best first
    predicted: int  # configurations predicted
    space_size: int  # of the whole space
    invalid: int  # predicted times that were not positive
    method: str  # "exhaustive" or "coordinate descent"


def _predict(
    model: Model, enc: Encoding, dims: Sequence[str], idx: np.ndarray, scale: Mapping[str, float]
) -> np.ndarray:
    """Predicted times of index rows (one column per dimension in dims)."""
    table: dict[str, np.ndarray] = {}
    for j, dim in enumerate(dims):
        for name, values in enc.lookup(dim).items():
            table[name] = values[idx[:, j]]
    for name, value in scale.items():
        table[name] = np.full(len(idx), float(value))
    return model.predict(table, len(idx))


def top(
    model: Model,
    enc: Encoding,
    k: int,
    reference: Mapping[str, Any],
    scale: Mapping[str, float],
    skip: Callable[[dict[str, Any]], bool] = lambda p: False,
    seed: int = 0,
) -> Ranking:
    """The k configurations with the shortest predicted time, skipping those `skip` rejects (measured ones)."""
    space = enc.space
    dims = enc.dimensions_of(model.variables())
    sizes = [len(space.dimension(d).values) for d in dims]
    total = math.prod(sizes)
    want = k + 64  # room for the skipped ones; more are predicted again if needed

    def point_of(row) -> dict[str, Any]:
        p = dict(reference)
        for d, i in zip(dims, row):
            p[d] = space.dimension(d).values[int(i)]
        return p

    ref = np.array([enc.index(d, reference[d]) if d in reference else -1 for d in dims], dtype=np.int64)
    free = [d for d in space.dimensions if d.name not in dims]

    def completions(row) -> Iterator[dict[str, Any]]:
        """The point of a combination of the model's dimensions, with the others as in the reference; then
        with one of the others changed, then two, ...: they all have the same prediction."""
        base = point_of(row)
        yield base
        for distance in range(1, len(free) + 1):
            for subset in itertools.combinations(free, distance):
                others = [[v for v in d.values if d.label(v) != d.label(reference.get(d.name))] for d in subset]
                for values in itertools.product(*others):
                    yield {**base, **{d.name: v for d, v in zip(subset, values)}}

    def pick(rows: np.ndarray, times: np.ndarray) -> list[tuple[dict[str, Any], float]]:
        """The best k not skipped; among equal predictions, the nearest to the reference point first."""
        out = []
        distance = (rows != ref).sum(axis=1) if len(rows) else np.zeros(0)
        for i in np.lexsort((distance, times)):
            for p in completions(rows[i]):
                if not skip(p):
                    out.append((p, float(times[i])))
                    if len(out) == k:
                        return out
        return out

    if total <= LIMIT:
        keep = want
        while True:
            rows_best, times_best, invalid = np.empty((0, len(dims)), dtype=np.int64), np.empty(0), 0
            for start in range(0, total, BLOCK):
                flat = np.arange(start, min(total, start + BLOCK))
                rows = np.stack(np.unravel_index(flat, sizes), axis=1) if dims else np.zeros((len(flat), 0), int)
                t = _predict(model, enc, dims, rows, scale)
                bad = ~np.isfinite(t) | (t <= 0)
                invalid += int(bad.sum())
                rows, t = rows[~bad], t[~bad]
                if len(t) > keep:
                    part = np.argpartition(t, keep)[:keep]
                    rows, t = rows[part], t[part]
                rows_best, times_best = np.vstack([rows_best, rows]), np.concatenate([times_best, t])
                if len(times_best) > keep:
                    part = np.argpartition(times_best, keep)[:keep]
                    rows_best, times_best = rows_best[part], times_best[part]
            picked = pick(rows_best, times_best)
            if len(picked) == k or len(times_best) < keep or keep >= total:
                return Ranking(picked, total, space.size(), invalid, "exhaustive")
            keep *= 4  # many of the best are measured already: look further down

    # too many to predict all: coordinate descent on the model from many starts
    rng = random.Random(seed)
    seen: dict[tuple[int, ...], float] = {}
    invalid = 0

    def evaluate(rows: list[tuple[int, ...]]) -> np.ndarray:
        nonlocal invalid
        t = _predict(model, enc, dims, np.array(rows, dtype=np.int64), scale)
        bad = ~np.isfinite(t) | (t <= 0)
        invalid += int(bad.sum())
        t = np.where(bad, np.inf, t)
        for r, x in zip(rows, t):
            seen[r] = float(x)
        return t

    def index_of(p: Mapping[str, Any]) -> tuple[int, ...]:
        return tuple(enc.index(d, p[d]) or 0 for d in dims)

    starts = [index_of(reference)] + [tuple(rng.randrange(s) for s in sizes) for _ in range(STARTS)]
    for start in starts:
        current = list(start)
        for _ in range(50):
            moved = False
            for j, s in enumerate(sizes):
                options = [tuple(current[:j] + [v] + current[j + 1 :]) for v in range(s)]
                t = evaluate(options)
                best = int(np.argmin(t))
                if best != current[j] and t[best] < t[current[j]]:
                    current[j], moved = best, True
            if not moved:
                break
    rows = list(seen)
    times = np.array([seen[r] for r in rows])
    ok = np.isfinite(times)
    return Ranking(pick(np.array(rows)[ok], times[ok]), len(seen), space.size(), invalid, "coordinate descent")
