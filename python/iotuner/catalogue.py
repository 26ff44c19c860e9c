"""The knob catalogue, read from the C core (its single definition)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from . import native

LAYERS = ("hdf5", "mpiio", "lustre", "ompio", "pnetcdf")


@dataclass(frozen=True)
class Knob:
    name: str
    layer: str
    type: str
    applied_at: str
    default: str | None
    choices: tuple[str, ...] | None
    min: float | None
    max: float | None
    multiple_of: int | None
    parallel_only: bool
    requires: str | None
    honoured_by: str
    description: str

    def default_value(self):
        """The documented default as a settings value (None when the library decides)."""
        d = self.default
        if d is None:
            return None
        if self.type in ("size", "int"):
            return int(d)
        if self.type == "bool":
            return d == "true"
        if self.type == "float":
            return float(d)
        if self.type == "size_pair":
            return [int(x) for x in d.split(",")]
        return d

    @property
    def key(self) -> str:
        """ "layer.name", as search spaces and flat settings name knobs."""
        return f"{self.layer}.{self.name}"


@functools.lru_cache(maxsize=1)
def knobs() -> dict[str, Knob]:
    """Every catalogued knob by "layer.name"."""
    out = {}
    for k in native.core().catalogue()["knobs"]:
        knob = Knob(
            name=k["name"],
            layer=k["layer"],
            type=k["type"],
            applied_at=k["applied_at"],
            default=k["default"],
            choices=tuple(k["choices"]) if "choices" in k else None,
            min=k.get("min"),
            max=k.get("max"),
            multiple_of=k.get("multiple_of"),
            parallel_only=k["parallel_only"],
            requires=k["requires"],
            honoured_by=k["honoured_by"],
            description=k["description"],
        )
        out[knob.key] = knob
    return out


def knob(key: str) -> Knob:
    try:
        return knobs()[key]
    except KeyError:
        raise KeyError(f"unknown knob '{key}' (known: {', '.join(sorted(knobs()))})") from None
