"""Run reports (the output contract of the runtime; schema in docs/report.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import schema
from .inputs import InputError, read_json

VERSION = 2  # 2: phases keyed by who opened them (docs/report.md, "Version 2"); 1 is still read
KIND = "iotuner-run-report"
# Each module's section carries its own version (the report's "sections", by module name): the versions this
# iotuner reads. A section a report does not list, and every section of a report before per-section versions,
# is version 1.
SECTION_VERSIONS = {"posix": 1, "mpiio": 1, "hdf5": 1, "pnetcdf": 1, "stdio": 1, "access": 1, "smart": 1}
MAX_BYTES = 256 << 20  # 65,536 phases (the runtime's limit) with their settings fit


class ReportError(InputError):
    """Not a run report this iotuner reads (exit status 2 in the CLI)."""


@dataclass
class Report:
    data: dict

    @property
    def phases(self) -> list[dict]:
        return self.data["phases"]

    @property
    def totals(self) -> dict:
        return self.data["totals"]

    @property
    def run(self) -> dict:
        return self.data["run"]

    def in_calls(self) -> dict:
        """Totals as `totals` names them, with each phase's time taken inside the application's I/O calls at
        the phase's data level (HDF5's H5Dwrite and H5Dread, MPI-IO's or POSIX's calls; the slowest rank's)
        instead of from its open to its close: what an I/O kernel and its application share, whatever the
        application computes between its calls."""
        tw = tr = 0.0
        for p in self.phases:
            level = p.get(p.get("data_level") or "posix") or {}
            tw += float(level.get("write_time_s") or 0.0)
            tr += float(level.get("read_time_s") or 0.0)
        t = self.totals
        bw, br = t["bytes_written"], t["bytes_read"]
        mib = 1024.0 * 1024.0
        return {
            **t,
            "write_time_s": tw,
            "read_time_s": tr,
            "write_bandwidth_mib_s": bw / mib / tw if tw > 0 else 0.0,
            "read_bandwidth_mib_s": br / mib / tr if tr > 0 else 0.0,
        }

    def section_version(self, module: str) -> int:
        """The version of a module's section (1 when the report does not say: reports before per-section
        versions)."""
        return int(self.data.get("sections", {}).get(module, 1))

    @property
    def settings(self) -> dict:
        return self.data["settings"]

    @property
    def warnings(self) -> list[str]:
        return self.data.get("warnings", [])

    @property
    def incomplete(self) -> str | None:
        """Why the report holds only one process's share of an MPI job (MPI_Init went around the runtime);
        None: the whole job."""
        return self.data.get("incomplete")

    def warnings_not_printed(self) -> list[str]:
        """The warnings the job's rank 0 did not print on its stderr (they come first; reports before
        warnings_printed say nothing, so all of them)."""
        return self.warnings[int(self.data.get("warnings_printed", 0)) :]

    def data_phases(self) -> list[dict]:
        """Phases that moved the application's data."""
        return [p for p in self.phases if p["bytes_written"] or p["bytes_read"]]

    def empty_phases(self) -> list[dict]:
        """Phases that moved no data: a file opened to look at it, or created and left empty."""
        return [p for p in self.phases if not (p["bytes_written"] or p["bytes_read"])]

    def access(self, phase: int) -> list[dict]:
        """Per rank, the access pattern of a phase's collective MPI-IO calls (docs/report.md); [] when none,
        or when they were not one collective: a folded phase of files each opened by one process."""
        for entry in self.data.get("access", []):
            if entry["phase"] == phase:
                ph = self.phases[phase] if 0 <= phase < len(self.phases) else {}
                alone = int(ph.get("group_size", 0) or 0) == 1
                return [] if alone and entry.get("ranks_total", len(entry["ranks"])) > 1 else entry["ranks"]
        return []

    def application_value(self, knob: str) -> str | None:
        """The application's own value of "layer.knob", as it opened its files (None: it left the library's
        default, or the report does not say: version 1)."""
        for p in self.phases:
            value = p.get("application_settings", {}).get(knob)
            if value is not None:
                return value
        return None

    def checks(self, layer: str | None = None, knob: str | None = None) -> list[dict]:
        """Every verification entry, each with the phase's file added."""
        out = []
        for p in self.phases:
            for s in p.get("settings", []):
                if (layer is None or s["layer"] == layer) and (knob is None or s["knob"] == knob):
                    out.append({**s, "file": p["file"], "phase": p["id"]})
        return out

    def without_phase(self) -> list[dict]:
        """The requested knobs no phase has a row for, each with its status (not_used, cannot_apply) and why
        (docs/report.md); [] in reports before them."""
        return self.settings.get("without_phase", [])

    def effective_hints(self, phase: int | None = None) -> dict[str, str]:
        """MPI-IO hints as read back from the first (or given) phase that opened a file with MPI-IO."""
        for p in self.phases:
            if (phase is None or p["id"] == phase) and "mpi_hints" in p:
                return p["mpi_hints"]
        return {}


_REQUIRED = {"run": dict, "settings": dict, "phases": list, "totals": dict}


def parse(data: Any, source: str = "report") -> Report:
    """The report, checked against docs/report.schema.json: a report that does not match is refused with one
    line naming the field, so that every reader downstream can trust its shapes."""
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise ReportError(f"{source} is not an iotuner run report")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ReportError(f"{source} has no valid version field")
    if version > VERSION:
        raise ReportError(f"{source} is report version {version}; this iotuner reads up to {VERSION}")
    for key, typ in _REQUIRED.items():
        if not isinstance(data.get(key), typ):
            raise ReportError(f"{source} lacks '{key}'")
    _check_sections(data.get("sections", {}), source)
    try:
        schema.check(data if version == VERSION else _as_version_2(data), "report.schema.json")
    except schema.SchemaError as e:
        raise ReportError(f"run report {source} is damaged: {e}") from None
    return Report(data)


def _check_sections(sections: Any, source: str) -> None:
    """A section newer than this iotuner reads is refused by name, before the schema would call its new shape
    damage; the shapes of the field itself are the schema's."""
    if not isinstance(sections, dict):
        return
    for module, readable in SECTION_VERSIONS.items():
        version = sections.get(module, 1)
        if isinstance(version, int) and not isinstance(version, bool) and version > readable:
            raise ReportError(f"{source}'s {module} section is version {version}; this iotuner reads up to {readable}")


# The fields version 2 added, as a version-1 report reads them (docs/report.md, "Version 2")
_V1_PHASE = {"scope": "independent", "files": 1, "folded": False, "group_size": 1, "application_settings": {}}


def _as_version_2(data: dict) -> dict:
    """A version-1 report with version 2's phase fields at their defaults: what the schema checks it as (the
    report itself is left as it is)."""
    out = dict(data, version=VERSION)
    if isinstance(data.get("phases"), list):
        out["phases"] = [
            {**_V1_PHASE, "identity": p.get("file"), "group_size": p.get("ranks", 1), **p} if isinstance(p, dict) else p
            for p in data["phases"]
        ]
    out.pop("smart", None)  # version 1's smart section had other counters: its readers take it as it comes
    return out


DAMAGE = (KeyError, TypeError, AttributeError, ValueError, IndexError, OverflowError)


def malformed(e: BaseException, source: str) -> ReportError:
    """A reader's error on a report that parsed but holds the wrong shapes (a field missing, a string where
    a number goes): one line naming the report and the field, not a traceback."""
    if isinstance(e, KeyError):
        what = f"a field is missing: {e}"
    else:
        what = f"a field has the wrong type or value ({type(e).__name__}: {str(e)[:100]})"
    return ReportError(f"run report {source} is damaged: {what}")


def load(path: str | Path) -> Report:
    try:
        data = read_json(path, "a run report", max_bytes=MAX_BYTES)
    except InputError as e:
        raise ReportError(str(e)) from None
    return parse(data, str(path))
