"""Convert an H5Tuner XML control file into an iotuner settings document.

H5Tuner looks up each parameter by element name anywhere in the document (the
High_Level_IO_Library / Middleware_Layer / Parallel_File_System sections are
only for readers). An element with a FileName attribute applies to the file
of that base name and wins over one without; `chunk` may also carry a
VariableName (the dataset) and matches FileName as a suffix of the path.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from glob import escape
from pathlib import Path
from typing import Any

from . import settings
from .inputs import read_bytes

SECTIONS = {"Parameters", "High_Level_IO_Library", "Middleware_Layer", "Parallel_File_System"}

# H5Tuner passes these to MPI_Info_set by name, striping included.
MPI_HINTS = ("cb_buffer_size", "cb_nodes", "striping_factor", "striping_unit", "IBM_largeblock_io", "bgl_nodes_pset")


class ConversionError(ValueError):
    pass


@dataclass
class Conversion:
    document: dict
    notes: list[str] = field(default_factory=list)


def _int(text: str, what: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise ConversionError(f"{what}: '{text.strip()}' is not a whole number") from None
    if value < 0:
        raise ConversionError(f"{what}: {value} is negative")
    return value


def _ints(text: str, what: str) -> list[int]:
    parts = [p for p in text.replace(" ", "").split(",") if p]
    if not parts:
        raise ConversionError(f"{what}: no values")
    return [_int(p, what) for p in parts]


def convert_text(xml_text: str | bytes, source: str = "<xml>") -> Conversion:
    """Bytes are decoded as the XML declaration says (UTF-8 without one)."""
    try:
        root = ET.fromstring(xml_text)
    except (ET.ParseError, ValueError, LookupError) as e:  # LookupError: an encoding Python does not know
        raise ConversionError(f"{source} is not well-formed XML: {e}") from None
    general: dict[str, dict[str, Any]] = {}
    per_file: dict[tuple[str | None, str | None], dict[str, dict[str, Any]]] = {}
    notes: list[str] = []

    def target(file_name: str | None, dataset: str | None = None) -> dict[str, dict[str, Any]]:
        if file_name is None and dataset is None:
            return general
        return per_file.setdefault((file_name, dataset), {})

    for el in root.iter():
        tag = el.tag
        if tag in SECTIONS:
            continue
        text = (el.text or "").strip()
        file_name = el.get("FileName")
        where = f"<{tag}{' FileName=' + repr(file_name) if file_name else ''}>"
        if tag == "alignment":
            values = _ints(text, where)
            if len(values) != 2:
                raise ConversionError(f"{where}: expected 'threshold,alignment', got '{text}'")
            target(file_name).setdefault("hdf5", {})["alignment"] = values
        elif tag == "sieve_buf_size":
            target(file_name).setdefault("hdf5", {})["sieve_buf_size"] = _int(text, where)
        elif tag == "chunk":
            dims = _ints(text, where)
            if any(d == 0 for d in dims):
                raise ConversionError(f"{where}: chunk dimensions must be positive")
            # H5Tuner matches a chunk's FileName against the end of the path
            pattern = None
            if file_name:
                pattern = "*" + escape(file_name) if "/" in file_name else escape(file_name)
            target(pattern, el.get("VariableName")).setdefault("hdf5", {})["chunk_dims"] = dims
        elif tag in MPI_HINTS:
            if not text:
                raise ConversionError(f"{where}: empty value")
            value: Any = int(text) if text.lstrip("-").isascii() and text.lstrip("-").isdigit() else text
            target(escape(file_name) if file_name else None).setdefault("mpiio", {})[tag] = value
        elif tag == "IBM_lockless_io":
            notes.append(f"{where}: GPFS 'bglockless:' file-name prefixes are not supported; ignored")
        else:
            notes.append(f"{where}: not an H5Tuner parameter; ignored")

    groups: list[dict] = []
    if general:
        groups.append(general)
    for (file_glob, dataset), layers in per_file.items():
        group: dict[str, Any] = {}
        if file_glob:
            group["file"] = file_glob
        if dataset:
            group["dataset"] = dataset
        group.update(layers)
        groups.append(group)
    doc = {
        "version": settings.VERSION,
        "description": f"converted from H5Tuner control file {source}",
        "groups": groups,
    }
    try:
        return Conversion(settings.validate(doc), notes)
    except settings.SettingsError as e:
        raise ConversionError(f"{source}: {e}") from None


def convert_file(path: str | Path) -> Conversion:
    """InputError (exit 2) for a file that is not text; the XML declaration's encoding is honoured."""
    path = Path(path)
    return convert_text(read_bytes(path, "an H5Tuner XML file"), path.name)
