"""A search space's points as model variables.

A dimension whose values are all positive numbers, at least three of them,
is a numeric variable, in natural units: sizes in MiB, counts as counts,
HDF5 alignment by its alignment (the threshold aside), chunk dimensions by
the elements per chunk, a joint dimension by its first numeric knob (H5Evolve
ties the stripe size to cb_buffer_size). Any other dimension is categorical:
one indicator per value but the first, its reference level. A numeric
dimension with two values is categorical too: x, 1/x and the intercept are
collinear over two values; and so is one whose values span more than a
factor of 10^4 (HDF5 alignment from 1 byte, "none", to 1 MiB), where x and
1/x would only tell its extreme value from the others.

The problem size enters as two more numeric variables, `size_mib` (MiB the
application moves in a run, written and read, from the run report's totals)
and `ranks` (MPI processes), so that a model fitted on several sizes predicts
another one; products like size_mib / ranks (bytes per rank) are basis
terms like any other.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .... import catalogue
from ....settings import as_text
from ...space import Dimension, SearchSpace
from .basis import Term, candidates

MIB = 1024 * 1024
SCALE = ("size_mib", "ranks")
SCALE_LEGEND = {"size_mib": "MiB the application moves per run (written + read)", "ranks": "MPI processes"}
SPAN = 1e4  # a wider numeric range makes x and 1/x terms indicators of its extreme values: categorical instead
FULL_BASIS = 6  # with more numeric variables than this, products of at most three of them (3^6 - 1 = 728 terms)


def _knob_number(knob: str, value: Any) -> tuple[float | None, str]:
    """(the value as a number, its unit) for a knob's value; None when it is not a positive number."""
    kind = catalogue.knobs()[knob].type if knob in catalogue.knobs() else ""
    if value is None or isinstance(value, (bool, str, dict)):
        return None, ""
    if isinstance(value, (list, tuple)):
        if not value or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return None, ""
        if kind == "size_pair":  # HDF5 alignment (threshold, alignment): the alignment
            x, unit = float(value[-1]) / MIB, "MiB"
        else:  # chunk dimensions: elements per chunk
            x, unit = float(math.prod(value)), "elements"
    elif isinstance(value, (int, float)):
        x, unit = (float(value) / MIB, "MiB") if kind == "size" else (float(value), "")
    else:
        return None, ""
    return (x, unit) if x > 0 and math.isfinite(x) else (None, "")


def _dimension_numbers(d: Dimension) -> tuple[list[float] | None, str, str]:
    """(a number per value, unit, the knob it comes from), or None: the dimension is categorical."""
    if d.knob is not None:
        knobs = [d.knob]
    else:  # a joint dimension: its first knob that is numeric in every value
        knobs = [k for k in d.values[0] if all(isinstance(v, Mapping) and k in v for v in d.values)]
    for knob in knobs:
        pairs = [_knob_number(knob, v if d.knob is not None else v[knob]) for v in d.values]
        if all(x is not None for x, _ in pairs):
            return [x for x, _ in pairs], pairs[0][1], knob
    return None, "", ""


def _text(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, Mapping):
        return ",".join(as_text(v) for v in value.values())
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return "x".join(str(v) for v in value)
    return as_text(value)


@dataclass(frozen=True)
class Numeric:
    dimension: str
    name: str
    numbers: tuple[float, ...]  # one per value of the dimension
    legend: str


@dataclass(frozen=True)
class Categorical:
    dimension: str
    name: str
    indicators: tuple[str, ...]  # one per value but the first (None for the first)
    legend: str


class Encoding:
    """How a space's points become variables."""

    def __init__(self, space: SearchSpace):
        self.space = space
        self._labels: dict[str, dict[str, int]] = {}
        short = {}
        for d in space.dimensions:
            name = d.knob.split(".", 1)[-1] if d.knob else d.name
            short[d.name] = name if list(short.values()).count(name) == 0 else d.name
        self.numeric: dict[str, Numeric] = {}
        self.categorical: dict[str, Categorical] = {}
        for d in space.dimensions:
            numbers, unit, knob = _dimension_numbers(d)
            name = short[d.name]
            if numbers is not None and len(set(numbers)) >= 3 and max(numbers) <= SPAN * min(numbers):
                what = f"{knob}" + (f" in {unit}" if unit else "") + ("" if d.knob else f" (dimension {d.name})")
                self.numeric[d.name] = Numeric(d.name, name, tuple(numbers), what)
            else:
                flags = tuple(f"{name}={_text(v)}" for v in d.values[1:])
                self.categorical[d.name] = Categorical(
                    d.name, name, flags, f"1 when {d.name} is that value (else {_text(d.values[0])})"
                )

    def legend(self) -> dict[str, str]:
        out = {v.name: v.legend for v in self.numeric.values()}
        for c in self.categorical.values():
            for f in c.indicators:
                out[f] = f"1 when {c.dimension} = {f.split('=', 1)[1]}, else 0"
        return {**out, **SCALE_LEGEND}

    def index(self, dimension: str, value: Any) -> int | None:
        """The value's place in the dimension's list (None: not one of its values)."""
        d = self.space.dimension(dimension)
        if dimension not in self._labels:
            self._labels[dimension] = {label: i for i, label in enumerate(d.labels)}
        return self._labels[dimension].get(d.label(value))

    def number(self, dimension: str, value: Any) -> float:
        """A numeric dimension's value as a number (a value outside the space's list too)."""
        var = self.numeric[dimension]
        i = self.index(dimension, value)
        if i is not None:
            return var.numbers[i]
        d = self.space.dimension(dimension)
        knob = d.knob or next(iter(value))
        x, _ = _knob_number(knob, value if d.knob else value[knob])
        return float("nan") if x is None else x

    def table(
        self, points: Sequence[Mapping[str, Any]], scale: Sequence[Mapping[str, float]] | None = None
    ) -> dict[str, np.ndarray]:
        """Columns of variables, one row per point ({dimension: value}); scale: size_mib and ranks per row."""
        out: dict[str, np.ndarray] = {}
        for dim, var in self.numeric.items():
            out[var.name] = np.array([self.number(dim, p[dim]) if dim in p else np.nan for p in points])
        for dim, cat in self.categorical.items():
            idx = [self.index(dim, p.get(dim)) if dim in p else None for p in points]
            for j, flag in enumerate(cat.indicators, start=1):
                out[flag] = np.array([1.0 if i == j else 0.0 for i in idx])
        for name in SCALE:
            out[name] = np.array([float((s or {}).get(name) or np.nan) for s in (scale or [{}] * len(points))])
        return out

    def lookup(self, dimension: str) -> dict[str, np.ndarray]:
        """Each variable of one dimension, by the index of the dimension's value (for predicting a grid)."""
        if dimension in self.numeric:
            var = self.numeric[dimension]
            return {var.name: np.array(var.numbers)}
        cat = self.categorical[dimension]
        n = len(cat.indicators) + 1
        return {f: (np.arange(n) == j).astype(float) for j, f in enumerate(cat.indicators, start=1)}

    def dimensions_of(self, variables: set[str]) -> list[str]:
        """The dimensions whose variables appear among these (in the space's order)."""
        out = []
        for d in self.space.dimensions:
            names = {self.numeric[d.name].name} if d.name in self.numeric else set(self.categorical[d.name].indicators)
            if names & variables:
                out.append(d.name)
        return out

    def candidates(self, table: Mapping[str, np.ndarray], max_order: int | None = None) -> list[Term]:
        """The candidate terms the data can support: variables that vary in it (the problem size only when
        several sizes were measured); a numeric variable with two values in the data is linear only."""
        numeric, linear = [], []
        for name in [v.name for v in self.numeric.values()] + list(SCALE):
            col = table.get(name)
            if col is None or not np.all(np.isfinite(col)) or np.any(col <= 0):
                continue
            distinct = len(np.unique(col))
            if distinct >= 2:
                numeric.append(name)
                if distinct == 2:
                    linear.append(name)
        indicators = {}
        for cat in self.categorical.values():
            flags = [f for f in cat.indicators if 0 < table[f].sum() < len(table[f])]
            if flags:
                indicators[cat.name] = flags
        order = max_order if max_order is not None else (None if len(numeric) <= FULL_BASIS else 3)
        return candidates(numeric, indicators, order, linear)


def point_of(space: SearchSpace, flat: Mapping[str, Any]) -> dict[str, Any] | None:
    """The point ({dimension: value}) whose settings these flat settings are; None if they are not a point
    of the space (settings compared as JSON, so 1048576 and 1048576.0 are one value)."""

    def norm(x: Any) -> Any:
        if isinstance(x, float) and x.is_integer():
            return int(x)
        if isinstance(x, (list, tuple)):
            return [norm(v) for v in x]
        return x

    def same(a: Any, b: Any) -> bool:
        return json.dumps(norm(a), sort_keys=True) == json.dumps(norm(b), sort_keys=True)

    out: dict[str, Any] = {}
    for d in space.dimensions:
        match = None
        for v in d.values:
            want = d.settings_of(v)
            if want and all(k in flat and same(flat[k], x) for k, x in want.items()):
                match = (v,)
                break
            if not want and not any(k in flat for k in d.knobs()):
                match = (v,)  # the knob left unset
        if match is None:
            return None
        out[d.name] = match[0]
    return out
