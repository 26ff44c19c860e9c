"""Points the model knows to behave alike are one point of the search: a dimension whose every knob cannot act
given the point's other settings (perfmodel.romio_hints.inert: `cb_buffer_size` with collective buffering off
in both directions) is set to one representative value, its first, so equivalent points share one key.

HDF5's independent transfers reach ROMIO as independent calls (the model counts them so: predict.hint_overrides),
where collective buffering does not act, unless HDF5 writes (reads) its metadata collectively."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....perfmodel.predict import TRANSFER, hint_overrides
from ....perfmodel.romio_hints import inert

MPIIO = "mpiio."


def canonical(space, labels: Mapping[str, str], baseline: Mapping[str, Any] | None = None, nodes: int = 1) -> dict:
    """The point's representative ({dimension: label}); baseline: the flat settings every run has under the
    point (knobs of no dimension act as the baseline sets them)."""
    flat = {**dict(baseline or {}), **space.point_settings(space.decode(dict(labels)))}
    silent = {MPIIO + h for h in inert(hint_overrides(flat, nodes))}
    if flat.get(TRANSFER) == "independent":
        for direction in ("write", "read"):
            if not _true(flat.get(f"hdf5.coll_metadata_{direction}s")):
                silent.add(f"{MPIIO}romio_cb_{direction}")
    if not silent:
        return dict(labels)
    out = dict(labels)
    for d in space.dimensions:
        if d.name in out and d.knobs() and d.knobs() <= silent:
            out[d.name] = d.labels[0]
    return out


def key(space, labels: Mapping[str, str]) -> tuple:
    return tuple(labels[d.name] for d in space.dimensions)


def _true(value) -> bool:
    return value is True or str(value).lower() in ("true", "1", "yes")
