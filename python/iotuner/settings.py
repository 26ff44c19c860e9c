"""Settings documents (the input contract of the runtime; schema in docs/settings.md).

Validation is the C core's, so a document this module accepts is exactly one
the runtime applies.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

from . import native
from .catalogue import LAYERS

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


def load(path: str | os.PathLike) -> dict:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise SettingsError(f"cannot read settings file '{path}': {e.strerror}") from None
    try:
        return validate(text)
    except SettingsError as e:
        errors = str(e).splitlines()
        if len(errors) == 1:
            raise SettingsError(f"settings file '{path}' rejected: {errors[0]}") from None
        raise SettingsError(f"settings file '{path}' rejected, {len(errors)} errors:\n"
                            + "\n".join(f"  {x}" for x in errors)) from None


def save(doc: Mapping[str, Any], path: str | os.PathLike) -> Path:
    """Validates, then writes atomically (a reader never sees half a file)."""
    normalized = validate(doc)
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(normalized, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return path


def from_flat(values: Mapping[str, Any], *, description: str | None = None,
              meta: Mapping[str, Any] | None = None) -> dict:
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
