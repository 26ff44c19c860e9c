"""Hints interchange: ROMIO_HINTS files, Cray's MPICH_MPIIO_HINTS strings, H5Tuner XML <-> settings documents.

For sites that will not LD_PRELOAD: a tuned result becomes the hints their MPI
reads by itself. Each format reaches only part of the settings; `export` lists
what it had to leave out instead of dropping it silently.

- ROMIO_HINTS (MPICH, ROMIO's ad_hints): a file of "key value" lines, '#'
  comments; the hints apply to every file the job opens with MPI-IO.
- MPICH_MPIIO_HINTS (Cray MPICH): "pattern:key=value:key=value,pattern:...";
  the pattern is a shell wildcard on the file name as opened.
- H5Tuner XML: see h5tuner.py (read) and `to_h5tuner_xml` (write).
- PNETCDF_HINTS (PnetCDF): "key=value;key=value"; PnetCDF reads it at every
  ncmpi_create / ncmpi_open and prefers it to the MPI_Info the program gives.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from . import settings

FORMATS = ("romio-hints", "mpich-mpiio-hints", "h5tuner-xml", "pnetcdf-hints")


class HintsError(ValueError):
    pass


@dataclass
class Export:
    text: str
    left_out: list[str] = field(default_factory=list)  # "layer.knob (where): why"


# Which MPI libraries read each hint variable by themselves, judged from MPI_Get_library_version's text as the
# run report keeps it: True, False, or None (cannot tell). Checked here: Debian's MPICH 4.0.2 applies ROMIO_HINTS
# (read back from the opened file) and ignores MPICH_MPIIO_HINTS, which its library does not even name.
def _romio(lib: str, env: dict) -> bool | None:
    if "Open MPI" in lib:  # only its romio component reads it; ompio is the default
        return "romio" in env.get("OMPI_MCA_io", "")
    return True if any(f in lib for f in ("MPICH", "Intel(R) MPI", "MVAPICH")) else None


def _cray_mpich(lib: str, env: dict) -> bool | None:
    return "CRAY MPICH" in lib.upper() if lib else None


def _open_mpi(lib: str, env: dict) -> bool | None:
    return "Open MPI" in lib if lib else None


ENV_READERS = {
    "ROMIO_HINTS": ("ROMIO", _romio),
    "MPICH_MPIIO_HINTS": ("Cray MPICH", _cray_mpich),
    "MPICH_MPIIO_HINTS_DISPLAY": ("Cray MPICH", _cray_mpich),
    "OMPI_MCA_io": ("Open MPI", _open_mpi),
    "PNETCDF_HINTS": ("PnetCDF", lambda lib, env: None),
}


def environment_sources(run: dict) -> list[tuple[str, str, str | None]]:
    """(variable, value, why it is ignored or None) of the hint variables a run report says were set: a
    variable this run's MPI library does not read is not listed as if it applied."""
    env = run.get("hint_sources") or {}
    lib = " ".join((run.get("mpi_library") or "").split())
    out = []
    for var, value in env.items():
        reader, reads = ENV_READERS.get(var, (None, None))
        verdict = reads(lib, env) if reads else None
        out.append((var, value, f"ignored by this MPI ({lib}): {reader} reads it" if verdict is False else None))
    return out


def _value(text: str) -> Any:
    return int(text) if re.fullmatch(r"-?[0-9]+", text) else text


def parse_romio_hints(text: str, source: str = "ROMIO_HINTS file") -> dict[str, Any]:
    """{hint: value} of a ROMIO_HINTS file. ROMIO takes the first word as the key and the second as the
    value; a line with one word or more than two is an error here rather than a silent skip."""
    hints: dict[str, Any] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if len(words) != 2:
            raise HintsError(f"{source}, line {n}: expected 'key value', got '{line[:60]}'")
        hints[words[0]] = _value(words[1])
    return hints


def parse_mpich_mpiio_hints(text: str, source: str = "MPICH_MPIIO_HINTS") -> list[tuple[str, dict[str, Any]]]:
    """[(pattern, {hint: value})] of an MPICH_MPIIO_HINTS string, in order."""
    out = []
    for entry in (e.strip() for e in text.strip().split(",")):
        if not entry:
            continue
        pattern, *pairs = entry.split(":")
        if not pattern or not pairs:
            raise HintsError(f"{source}: '{entry[:60]}' is not 'pattern:key=value[:key=value...]'")
        hints = {}
        for pair in pairs:
            key, eq, value = pair.partition("=")
            if not eq or not key.strip() or not value.strip():
                raise HintsError(f"{source}: '{pair[:60]}' in '{entry[:60]}' is not key=value")
            hints[key.strip()] = _value(value.strip())
        out.append((pattern, hints))
    if not out:
        raise HintsError(f"{source} holds no hints")
    return out


def looks_like_mpich_mpiio_hints(text: str) -> bool:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return len(lines) == 1 and ":" in lines[0] and "=" in lines[0] and len(lines[0].split()) == 1


def from_romio_hints(text: str, source: str = "ROMIO_HINTS file") -> dict:
    doc = {
        "version": settings.VERSION,
        "description": f"converted from {source}",
        "mpiio": parse_romio_hints(text, source),
    }
    return _validated(doc, source)


def from_mpich_mpiio_hints(text: str, source: str = "MPICH_MPIIO_HINTS") -> dict:
    groups = []
    for pattern, hints in parse_mpich_mpiio_hints(text, source):
        groups.append({"mpiio": hints} if pattern == "*" else {"file": pattern, "mpiio": hints})
    return _validated(
        {"version": settings.VERSION, "description": f"converted from {source}", "groups": groups}, source
    )


def _validated(doc: dict, source: str) -> dict:
    try:
        return settings.validate(doc)
    except settings.SettingsError as e:
        raise HintsError(f"{source}: {e}") from None


# ---- export


def _groups(doc: dict) -> list[dict]:
    return settings.validate(doc).get("groups", [])


def _where(group: dict) -> str:
    parts = [f"file {group['file']}"] if "file" in group else []
    parts += [f"dataset {group['dataset']}"] if "dataset" in group else []
    return ", ".join(parts) or "every file"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _left_out(group: dict, layers: Iterable[str], why: str) -> list[str]:
    return [f"{layer}.{k} ({_where(group)}): {why}" for layer in layers for k in group.get(layer, {})]


OMPIO_IS_MCA = "not an MPI-IO hint: an Open MPI MCA parameter (OMPI_MCA_<parameter> in the job's environment)"
PNETCDF_IS_OWN = "a PnetCDF hint: PnetCDF reads it from ncmpi_create's MPI_Info or PNETCDF_HINTS (--to pnetcdf-hints)"


def to_romio_hints(doc: dict) -> Export:
    """The MPI-IO hints of the groups for every file, merged in order (a later group wins)."""
    merged: dict[str, Any] = {}
    left: list[str] = []
    for g in _groups(doc):
        if "file" in g or "dataset" in g:
            left += _left_out(
                g, ("hdf5", "mpiio", "lustre", "ompio", "pnetcdf"), "ROMIO_HINTS applies to every file alike"
            )
            continue
        merged.update(g.get("mpiio", {}))
        left += _left_out(g, ("hdf5",), "not an MPI-IO hint")
        left += _left_out(g, ("lustre",), "not an MPI-IO hint (mpiio.striping_factor / striping_unit are)")
        left += _left_out(g, ("ompio",), OMPIO_IS_MCA)
        left += _left_out(g, ("pnetcdf",), PNETCDF_IS_OWN)
    lines = ["# ROMIO hints from an iotuner settings document: export ROMIO_HINTS=<this file>"]
    lines += [f"{k} {_text(v)}" for k, v in merged.items()]
    return Export("\n".join(lines) + "\n", left)


def to_mpich_mpiio_hints(doc: dict) -> Export:
    """One pattern per group, in the document's order ('*' for every file)."""
    entries, left = [], []
    for g in _groups(doc):
        if "dataset" in g:
            left += _left_out(g, ("hdf5", "mpiio", "lustre", "ompio", "pnetcdf"), "MPICH_MPIIO_HINTS has no datasets")
            continue
        hints = g.get("mpiio", {})
        bad = [k for k, v in hints.items() if any(c in _text(v) for c in ",:=")]
        if bad:
            left += [
                f"mpiio.{k} ({_where(g)}): its value holds ',', ':' or '=', which the format cannot quote" for k in bad
            ]
        pairs = [f"{k}={_text(v)}" for k, v in hints.items() if k not in bad]
        if pairs:
            pattern = g.get("file", "*")
            if any(c in pattern for c in ",:"):
                left += [f"mpiio.{k} ({_where(g)}): the pattern holds ',' or ':'" for k in hints]
            else:
                entries.append(":".join([pattern, *pairs]))
        left += _left_out(g, ("hdf5", "lustre"), "not an MPI-IO hint")
        left += _left_out(g, ("ompio",), OMPIO_IS_MCA)
        left += _left_out(g, ("pnetcdf",), PNETCDF_IS_OWN)
    return Export(",".join(entries) + "\n", left)


# H5Tuner's parameters (h5tuner.MPI_HINTS are passed to MPI_Info_set by name)
_H5TUNER_HDF5 = ("alignment", "sieve_buf_size", "chunk_dims")
_H5TUNER_MPI = ("cb_buffer_size", "cb_nodes", "striping_factor", "striping_unit")
_SECTION = {
    "alignment": "High_Level_IO_Library",
    "sieve_buf_size": "High_Level_IO_Library",
    "chunk": "High_Level_IO_Library",
    "cb_buffer_size": "Middleware_Layer",
    "cb_nodes": "Middleware_Layer",
    "striping_factor": "Parallel_File_System",
    "striping_unit": "Parallel_File_System",
}


def to_h5tuner_xml(doc: dict) -> Export:
    """An H5Tuner control file. H5Tuner names a file exactly (FileName), so groups with glob patterns
    cannot be expressed; neither can knobs H5Tuner does not set."""
    root = ET.Element("Parameters")
    sections = {
        name: ET.SubElement(root, name)
        for name in ("High_Level_IO_Library", "Middleware_Layer", "Parallel_File_System")
    }
    left: list[str] = []
    for g in _groups(doc):
        file_name = g.get("file")
        if file_name is not None and (any(c in file_name for c in "*?[") or "/" in file_name):
            left += _left_out(
                g, ("hdf5", "mpiio", "lustre", "ompio", "pnetcdf"), "H5Tuner's FileName names one file, not a pattern"
            )
            continue
        left += _left_out(g, ("ompio",), OMPIO_IS_MCA)
        left += _left_out(g, ("pnetcdf",), "not an H5Tuner parameter (a PnetCDF hint: --to pnetcdf-hints)")
        attrs = {"FileName": file_name} if file_name else {}
        for knob, value in g.get("hdf5", {}).items():
            if knob not in _H5TUNER_HDF5:
                left.append(f"hdf5.{knob} ({_where(g)}): not an H5Tuner parameter")
                continue
            tag = "chunk" if knob == "chunk_dims" else knob
            el_attrs = dict(attrs)
            if "dataset" in g:
                if knob != "chunk_dims" or any(c in g["dataset"] for c in "*?["):
                    left.append(f"hdf5.{knob} ({_where(g)}): H5Tuner names datasets only for chunk, exactly")
                    continue
                el_attrs["VariableName"] = g["dataset"]
            ET.SubElement(sections[_SECTION[tag]], tag, el_attrs).text = _text(value)
        for knob, value in g.get("mpiio", {}).items():
            if knob not in _H5TUNER_MPI:
                left.append(f"mpiio.{knob} ({_where(g)}): H5Tuner does not pass this hint")
                continue
            ET.SubElement(sections[_SECTION[knob]], knob, attrs).text = _text(value)
        left += _left_out(g, ("lustre",), "not an H5Tuner parameter (mpiio.striping_factor / striping_unit are)")
    for el in sections.values():
        if not len(el):
            root.remove(el)
    ET.indent(root)
    return Export('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n", left)


def to_pnetcdf_hints(doc: dict) -> Export:
    """PNETCDF_HINTS: the PnetCDF and MPI-IO hints of the groups for every file, merged in order (a later group
    wins). PnetCDF reads it at every ncmpi_create / ncmpi_open, whatever the file, and passes the MPI-IO hints
    in it on to MPI_File_open (for its own files only); ';' and '=' separate, so no value may hold them."""
    merged: dict[str, Any] = {}
    left: list[str] = []
    for g in _groups(doc):
        if "file" in g or "dataset" in g:
            left += _left_out(
                g, ("hdf5", "mpiio", "lustre", "ompio", "pnetcdf"), "PNETCDF_HINTS applies to every file alike"
            )
            continue
        for layer in ("pnetcdf", "mpiio"):
            for k, v in g.get(layer, {}).items():
                if any(c in _text(v) for c in ";="):
                    left.append(f"{layer}.{k} ({_where(g)}): its value holds ';' or '=', which the format cannot quote")
                else:
                    merged[k] = v
        left += _left_out(g, ("hdf5", "lustre"), "not a PnetCDF or MPI-IO hint")
        left += _left_out(g, ("ompio",), OMPIO_IS_MCA)
    return Export(";".join(f"{k}={_text(v)}" for k, v in merged.items()) + "\n", left)


EXPORTERS = {
    "romio-hints": to_romio_hints,
    "mpich-mpiio-hints": to_mpich_mpiio_hints,
    "h5tuner-xml": to_h5tuner_xml,
    "pnetcdf-hints": to_pnetcdf_hints,
}


def export(doc: dict, to: str) -> Export:
    try:
        return EXPORTERS[to](doc)
    except KeyError:
        raise HintsError(f"unknown format '{to}' (one of {', '.join(FORMATS)})") from None
