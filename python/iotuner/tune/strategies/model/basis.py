"""Candidate basis terms: products of numeric variables with exponents in
{-1, 0, 1} (3^d - 1 terms for d variables: 80 for the paper's four, plus the
intercept), categorical indicators alone, each indicator times one numeric
variable or its inverse, and products of two indicators of different knobs
(categorical knobs interact: collective buffering matters only with
collective transfers)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, order=True)
class Term:
    powers: tuple[tuple[str, int], ...] = ()  # (numeric variable, exponent -1 or 1), by name
    flags: tuple[str, ...] = ()  # indicator variables, by name

    @property
    def order(self) -> int:
        return len(self.powers) + len(self.flags)

    def variables(self) -> set[str]:
        return {v for v, _ in self.powers} | set(self.flags)

    def values(self, table: Mapping[str, np.ndarray]) -> np.ndarray:
        n = len(next(iter(table.values())))
        out = np.ones(n)
        for v, e in self.powers:
            out = out * (table[v] if e > 0 else 1.0 / table[v])
        for f in self.flags:
            out = out * table[f]
        return out

    def text(self) -> str:
        """Like the paper's equations: 'c f / a', '1 / s', '[romio_cb_write=enable] / cb_nodes'."""
        up = [v for v, e in self.powers if e > 0] + [f"[{f}]" for f in self.flags]
        down = [v for v, e in self.powers if e < 0]
        head = " ".join(up) or "1"
        return f"{head} / {' '.join(down)}" if down else head

    def to_json(self) -> dict:
        return {"powers": {v: e for v, e in self.powers}, "flags": list(self.flags)}

    @classmethod
    def from_json(cls, doc: Mapping) -> Term:
        return cls(
            tuple(sorted((str(v), int(e)) for v, e in doc.get("powers", {}).items())),
            tuple(sorted(str(f) for f in doc.get("flags", ()))),
        )


def candidates(
    numeric: Sequence[str],
    indicators: Mapping[str, Sequence[str]],
    max_order: int | None = None,
    linear_only: Sequence[str] = (),
) -> list[Term]:
    """Every candidate term (the intercept apart).

    numeric: numeric variable names; linear_only: those of them that take two values in the data, where
    x, 1/x and the intercept are collinear, so only x is a candidate. indicators: {knob: its indicator
    names}. max_order: at most this many numeric factors in a product (None: all, 3^d - 1 terms).
    """
    numeric = sorted(numeric)
    top = len(numeric) if max_order is None else min(max_order, len(numeric))
    choices = [(1,) if v in linear_only else (-1, 1) for v in numeric]
    out: list[Term] = []
    for k in range(1, top + 1):
        for subset in itertools.combinations(range(len(numeric)), k):
            for exps in itertools.product(*(choices[i] for i in subset)):
                out.append(Term(tuple((numeric[i], e) for i, e in zip(subset, exps))))
    singles = [Term(((v, e),)) for v, ch in zip(numeric, choices) for e in ch]
    knobs = sorted(indicators)
    for knob in knobs:
        for f in indicators[knob]:
            out.append(Term(flags=(f,)))
            out.extend(Term(s.powers, (f,)) for s in singles)
    for a, b in itertools.combinations(knobs, 2):
        for fa in indicators[a]:
            for fb in indicators[b]:
                out.append(Term(flags=tuple(sorted((fa, fb)))))
    return out


def matrix(terms: Sequence[Term], table: Mapping[str, np.ndarray]) -> np.ndarray:
    """The terms' values, one column per term."""
    n = len(next(iter(table.values())))
    return np.column_stack([t.values(table) for t in terms]) if terms else np.empty((n, 0))


def count(d: int, max_order: int | None = None) -> int:
    """How many pure numeric product terms d variables give (80 for d = 4: the paper's 81 with the intercept)."""
    from math import comb

    top = d if max_order is None else min(max_order, d)
    return sum(comb(d, k) * 2**k for k in range(1, top + 1))
