"""Settings documents (the input contract of the runtime; schema in docs/settings.md).

Validation is the C core's, so a document this module accepts is exactly one
the runtime applies.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import catalogue, native
from .catalogue import LAYERS, knobs
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


# ---- how knobs relate: a value as text, the catalogue's `requires` ----


def as_text(value: Any) -> str:
    """A settings value as run reports show effective values: 1,1 for pairs, true/false, plain numbers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(as_text(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class Constraint:
    """A catalogue `requires`: knob `source` takes effect only as far as knob `target` allows.

    The target's template has {value} (the source's value) and {per_node}
    (ceil(value / nodes)), e.g. cb_nodes -> cb_config_list "*:{per_node}".
    """

    source: str
    target: str
    template: str

    def value_for(self, number: int, nodes: int = 1) -> str:
        return self.template.format(value=number, per_node=max(1, math.ceil(number / max(1, nodes))))

    def capacity(self, target_value: Any, nodes: int = 1) -> int | None:
        """How large the source may be under this target value (None: the value is not of the template's form)."""
        m = self._pattern().fullmatch(as_text(target_value).strip())
        if not m:
            return None
        if "per_node" in m.groupdict():
            return int(m["per_node"]) * max(1, nodes)
        return int(m["value"])

    def canonical(self, target_value: Any, source_effective: int, nodes: int = 1) -> str:
        """The target value as the one the template gives for the source's effective value, when it
        allows at least that much: "*:4" and "*:2" are the same with 2 aggregators on one node."""
        cap = self.capacity(target_value, nodes)
        if cap is not None and cap >= source_effective:
            return self.value_for(source_effective, nodes)
        return as_text(target_value)

    @functools.cache  # noqa: B019 - a handful of knobs, each kept for the process's life
    def _pattern(self) -> re.Pattern:
        parts = re.split(r"(\{value\}|\{per_node\})", self.template)
        return re.compile(
            "".join(f"(?P<{p[1:-1]}>\\d+)" if p in ("{value}", "{per_node}") else re.escape(p) for p in parts)
        )


def constraints() -> dict[str, Constraint]:
    """Every catalogue constraint, by the knob that needs another."""
    out = {}
    for key, knob in catalogue.knobs().items():
        if knob.requires:
            target, _, template = knob.requires.partition("=")
            out[key] = Constraint(key, target, template)
    return out


def complete(flat: Mapping[str, Any], nodes: int = 1) -> dict[str, Any]:
    """Adds the knobs that set knobs need (the catalogue's `requires`), when not given.

    Example: cb_nodes=4 on one node needs cb_config_list "*:4", or ROMIO caps it at 1.
    """
    out = dict(flat)
    for key, c in constraints().items():
        if key not in flat or c.target in out:
            continue
        try:
            number = int(flat[key])
        except (TypeError, ValueError):
            continue
        out[c.target] = c.value_for(number, nodes)
    return out
