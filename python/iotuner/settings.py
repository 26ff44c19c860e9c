"""Settings documents (the input contract of the runtime; schema in docs/settings.md).

Validation is the C core's, so a document this module accepts is exactly one
the runtime applies.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import native
from .catalogue import LAYERS
from .files import write_atomic
from .inputs import read_text

VERSION = 1


class SettingsError(ValueError):
    """A settings document that the runtime would reject, with the reason."""


def validate(doc: Mapping[str, Any] | str) -> dict:
    """The normalized document (sizes in bytes, canonical enum spellings)."""
    text = doc if isinstance(doc, str) else json.dumps(doc)
    try:
        return native.core().check_settings(text)
    except ValueError as e:
        raise SettingsError(str(e)) from None


# The runtime reads at most this much of a settings file (native/src/runtime/lifecycle.c)
MAX_BYTES = 16 << 20


def load(path: str | os.PathLike) -> dict:
    return check(path)[0]


def check(path: str | os.PathLike) -> tuple[dict, list[str]]:
    """The normalized document and its warnings: values that are legal but ruinous (the core's, with the
    file's line numbers) and near misses of catalogued hints. SettingsError names every error."""
    text = read_text(path, "a settings document", max_bytes=MAX_BYTES)  # InputError: not a text file at all
    try:
        doc = validate(text)
        return doc, native.core().settings_warnings(text) + near_misses(doc)
    except SettingsError as e:
        errors = str(e).splitlines()
        if len(errors) == 1:
            raise SettingsError(f"settings file '{path}' rejected: {errors[0]}") from None
        raise SettingsError(
            f"settings file '{path}' rejected, {len(errors)} errors:\n" + "\n".join(f"  {x}" for x in errors)
        ) from None


def save(doc: Mapping[str, Any], path: str | os.PathLike) -> Path:
    """Validates, then writes atomically (a reader never sees half a file)."""
    normalized = validate(doc)
    path = Path(path)
    write_atomic(path, json.dumps(normalized, indent=2) + "\n")
    return path


def from_flat(
    values: Mapping[str, Any], *, description: str | None = None, meta: Mapping[str, Any] | None = None
) -> dict:
    """A document with one group for every file, from {"layer.knob": value}."""
    doc: dict[str, Any] = {"version": VERSION}
    if description:
        doc["description"] = description
    if meta:
        doc["meta"] = dict(meta)
    group: dict[str, dict] = {}
    for key, value in values.items():
        layer, _, name = key.partition(".")
        if layer not in LAYERS or not name:
            raise SettingsError(f"'{key}' is not of the form layer.knob with layer one of {', '.join(LAYERS)}")
        group.setdefault(layer, {})[name] = value
    doc["groups"] = [group] if group else []
    return doc


def flatten(doc: Mapping[str, Any]) -> dict[str, Any]:
    """{"layer.knob": value} of the groups that apply to every file and dataset."""
    out: dict[str, Any] = {}
    for group in validate(doc).get("groups", []):
        if "file" in group or "dataset" in group:
            continue
        for layer in LAYERS:
            for name, value in group.get(layer, {}).items():
                out[f"{layer}.{name}"] = value
    return out


# Real hints of ROMIO, Cray MPICH and OMPIO that iotuner does not catalogue: passed through without a
# near-miss warning even when they look like a catalogued one.
OTHER_HINTS = frozenset(
    {
        "cb_pfr",
        "cb_fr_type",
        "cb_fr_alignment",
        "cb_ds_threshold",
        "cb_alltoall",
        "cb_read",
        "cb_write",
        "romio_filesystem_type",
        "romio_aggregator_list",
        "romio_visibility_immediate",
        "romio_lustre_co_ratio",
        "romio_lustre_coll_threshold",
        "romio_lustre_ds_in_coll",
        "romio_cb_pfr",
        "romio_cb_fr_types",
        "romio_cb_fr_alignment",
        "romio_cb_alltoall",
        "romio_cb_ds_threshold",
        "direct_read",
        "direct_write",
        "cray_cb_write_lock_mode",
        "cray_cb_nodes_multiplier",
        "access_style",
        "collective_buffering",
        "file_perm",
        "io_node_list",
        "nb_proc",
        "num_io_nodes",
        "filename",
        "romio_synchronized_flush",
    }
)


def near_misses(doc: Mapping[str, Any]) -> list[str]:
    """Warnings for MPI-IO hints that are not catalogued but are a near miss of one ("cb_nodez"): unknown
    hints pass through to MPI as they must, but a typo would silently do nothing. (Unknown knobs of the
    other layers are rejected by the core, with its own "did you mean".)"""
    import difflib

    from .catalogue import knobs

    known = sorted(k.name for k in knobs().values() if k.layer == "mpiio")
    out = []
    groups = [doc] + list(doc.get("groups") or [])
    for group in groups:
        hints = group.get("mpiio") if isinstance(group, Mapping) else None
        for name in hints if isinstance(hints, Mapping) else ():
            if name in known or name in OTHER_HINTS:
                continue
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
            if close:
                where = f" (file {group['file']})" if "file" in group else ""
                out.append(
                    f"mpiio.{name}{where} is not a hint iotuner knows; it is passed to MPI as is. "
                    f"Did you mean mpiio.{close[0]}?"
                )
    return out
