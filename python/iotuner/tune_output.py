"""A tune output directory, read back: summary.json and best.json, checked against their schemas.

`iotuner show DIR` and `iotuner report DIR` read them here, so a damaged file
gets one line naming it and the field (exit 2), never a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import inputs, schema, settings

SUMMARY_VERSION = 1


class TuneOutputError(inputs.InputError):
    """Not a tune output directory this iotuner reads: the message names the file and the field."""


def summary(out: str | os.PathLike) -> dict:
    """summary.json of a tune output directory, checked (summary.schema.json)."""
    path = Path(out) / "summary.json"
    if not path.is_file():
        raise TuneOutputError(f"{out} is a directory without summary.json: not a tune output directory")
    try:
        doc = inputs.read_json(path, "a tune summary (summary.json)")
    except inputs.InputError as e:
        raise TuneOutputError(str(e)) from None
    version = doc.get("version", SUMMARY_VERSION) if isinstance(doc, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > SUMMARY_VERSION:
        raise TuneOutputError(f"{path} is summary version {version}; this iotuner reads up to {SUMMARY_VERSION}")
    try:
        schema.check(doc, "summary.schema.json")
    except schema.SchemaError as e:
        raise TuneOutputError(f"{path} is damaged: {e}") from None
    return doc


def best(out: str | os.PathLike) -> dict | None:
    """best.json (a settings document, normalized), or None when the directory has none."""
    path = Path(out) / "best.json"
    if not path.exists():
        return None
    try:
        return settings.load(path)
    except settings.SettingsError as e:
        raise TuneOutputError(str(e).splitlines()[0]) from None
