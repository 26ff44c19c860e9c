"""One extraction of SmartIO's insights (Table 1) for advise, smart and auto.

The unit is what smart mode learns: a file phase identity (numbers normalized), how it was opened (created or
opened) and by whom (collectively or by one rank); its insights are those of its first phase, as smart mode
takes them from the phase it learns.

From a run report:

- smart mode's own insights, where the run recorded them (it extracted them from the calls themselves);
- write / read transfer: the access section's collective calls against the phase's data calls (plain MPI-IO:
  more MPI-IO calls than collective ones is mixed);
- locality: the access section, per rank: calls that follow on in the view (plain MPI-IO: one view, the file
  pointer moves on) or in the file (HDF5 and PnetCDF set a view per call) are sequential, a constant gap is
  strided, else random; independent calls: unknown (a report has no offsets);
- transfer size: the bytes of every collective call when equal, else bytes / calls; independent calls: bytes /
  data calls;
- shared file or one per process: opened by several ranks together is shared;
- same calls: collective transfers (every rank makes each), or equal per-rank collective calls.

From a Darshan log: Darshan's counters and DXT traces (the table in docs/advise.md).

A rule reads locality only as sequential or not (native/src/core/rules.c), so `rule_inputs` is what a rule
decision depends on: two extractions that agree there make the same decisions.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import native
from ..run_report import Report

if TYPE_CHECKING:  # the advice's view of files; importing the advise package here would be a cycle
    from ..advise.profile import FileFacts, Profile

LOCALITY_PERCENT = 0.9  # as IOT_LOCALITY_PERCENT in the core
SIZE_CLASS = 16 * 1024 * 1024  # the rules' only transfer-size threshold (rules 4, 5)
LIBRARY = {"hdf5": "hdf5", "pnetcdf": "pnetcdf", "mpiio": "mpiio"}


@dataclass
class Unit:
    """One learned phase: its identity, how it was opened, its insights and where each came from."""

    identity: str
    opened: str | None  # "create", "open" (run reports), None (Darshan: the whole job)
    scope: str | None  # "collective", "independent" (run reports)
    insights: dict
    sources: dict
    phases: list[int] = field(default_factory=list)  # the run report's phases of this unit, first the learned one
    files: list[FileFacts] = field(default_factory=list)  # the advice's view of its files

    def key(self) -> tuple:
        return self.identity, self.opened, self.scope


def rule_inputs(ins: dict) -> dict:
    """What the rules read of insights (native/src/core/rules.c): locality as sequential or not, transfer both
    directions together, the transfer size against the rules' threshold."""
    order = {"sequential": 1, "strided": 2, "random": 3}
    locs = [ins.get(f"{d}_locality") for d in ("write", "read")]
    known = [v for v in locs if v in order]
    xfers = {ins.get(f"{d}_transfer") for d in ("write", "read")} - {None, "none"}
    size = ins.get("transfer_size")
    return {
        "files": ins.get("files"),
        "sequential": (max(known, key=order.__getitem__) == "sequential") if known else None,
        "transfer": "mixed" if len(xfers) > 1 else (xfers.pop() if xfers else "none"),
        "transfer_size": None if not isinstance(size, int) or size < 0 else size >= SIZE_CLASS,
        "same_calls": ins.get("same_calls"),
        "file_system": ins.get("file_system") or None,
        "library": ins.get("library") or None,
    }


# ---- run reports


def _rank_locality(d: dict, view_space: bool) -> str:
    """One rank's collective calls in one direction, as smart mode's classifier sees their start offsets."""
    calls = int(d.get("calls") or 0)
    if calls <= 1:
        return "sequential"
    step, nbytes = d.get("call_step"), d.get("call_bytes")
    if step is None or nbytes is None:
        return "random"
    if view_space and not d.get("contiguous"):
        # one view for all calls: the file pointer moves on in the view, the next call continues the pattern
        reqs, stride = d.get("call_requests"), d.get("request_stride")
        if reqs and stride and step == reqs * stride:
            return "sequential"
    if step == nbytes:
        return "sequential"
    return "strided" if step > nbytes else "random"


def _worst(values) -> str | None:
    order = {"sequential": 1, "strided": 2, "random": 3}
    vals = [v for v in values if v in order]
    return max(vals, key=order.__getitem__) if vals else None


def _num(d: dict | None, key: str) -> float:
    v = (d or {}).get(key)
    return v if isinstance(v, (int, float)) else 0


def split(rep: Report, i: int, d: str) -> tuple[int, int] | None:
    """(collective, independent) data calls of a phase in one direction: the access section's collective calls,
    and the phase's other MPI-IO data calls for plain MPI-IO (HDF5's and PnetCDF's other MPI-IO calls are their
    metadata). None when the phase made no MPI-IO call that way."""
    ph = rep.phases[i]
    mpi_calls = int(_num(ph.get("mpiio"), f"{d}_calls"))
    coll = sum(int(r[d]["calls"]) for r in rep.access(i) if isinstance(r.get(d), dict) and r[d].get("calls"))
    if coll:
        return coll, max(0, mpi_calls - coll) if ph.get("kind") == "mpiio" else 0
    return (0, mpi_calls) if mpi_calls else None


def report_phase(rep: Report, i: int) -> tuple[dict, dict]:
    """(insights, where each came from) of one phase of a run report, as smart mode would extract them."""
    ph = rep.phases[i]
    acc = rep.access(i)
    kind = ph.get("kind") or "posix"
    ins: dict = {"identity": ph.get("identity") or native.core().identity(ph.get("file", "?"))}
    src: dict = {}
    size_parts: list[int] = []
    for d in ("write", "read"):
        word = "written" if d == "write" else "read"
        if kind == "hdf5":
            app_calls = int(_num(ph.get("hdf5"), f"dataset_{'writes' if d == 'write' else 'reads'}"))
        else:
            app_calls = int(_num(ph.get(kind), f"{d}_calls") or _num(ph.get("mpiio"), f"{d}_calls"))
        coll = [r[d] for r in acc if isinstance(r.get(d), dict) and r[d].get("calls")]
        coll_calls, indep_calls = split(rep, i, d) or (0, 0)
        ins[f"{d}_calls"] = app_calls
        ins[f"bytes_{word}"] = int(_num(ph, f"bytes_{word}"))
        if coll_calls:
            ins[f"{d}_transfer"] = "mixed" if indep_calls else "collective"
            src[f"{d}_transfer"] = "the access section's collective calls against the phase's MPI-IO calls"
            ins[f"{d}_locality"] = _worst(_rank_locality(x, kind == "mpiio") for x in coll)
            src[f"{d}_locality"] = "the access section: the steps between the collective calls of each rank"
            for x in coll:
                size_parts.append(int(x["call_bytes"]) if x.get("call_bytes") else int(x["bytes"]) // int(x["calls"]))
        elif app_calls:
            ins[f"{d}_transfer"] = "independent"
            src[f"{d}_transfer"] = "data calls, none of them collective (no access section)"
            ins[f"{d}_locality"] = "unknown"
            src[f"{d}_locality"] = "unknown: independent calls, whose offsets a run report does not hold"
            size_parts.append(ins[f"bytes_{word}"] // app_calls)
        else:
            ins[f"{d}_transfer"] = "none"
            ins[f"{d}_locality"] = "unknown"
    if size_parts:
        ins["transfer_size"] = max(size_parts)
        src["transfer_size"] = "bytes per collective call (else per data call)"
    group = int(ph.get("group_size") or ph.get("ranks") or 1)
    ins["files"] = "shared" if group > 1 and ph.get("scope") != "independent" else "per_process"
    src["files"] = "the ranks that opened the phase's file together"
    ranks = int(ph.get("ranks") or 1)
    if kind in ("hdf5", "pnetcdf") and any(ins[f"{d}_transfer"] == "collective" for d in ("write", "read")):
        ins["same_calls"] = True  # a collective transfer is made by every rank
        src["same_calls"] = "collective transfers (every rank makes each)"
    elif acc and all(ins[f"{d}_transfer"] in ("collective", "none") for d in ("write", "read")):
        counts = {tuple(int((r.get(d) or {}).get("calls") or 0) for d in ("write", "read")) for r in acc}
        ins["same_calls"] = len(counts) == 1 and len(acc) == ranks
        src["same_calls"] = "per-rank collective calls (the access section)"
    ins["processes"] = max(1, ranks)
    ends = [int(r[d]["end"]) for r in acc for d in ("write", "read") if isinstance(r.get(d), dict) and "end" in r[d]]
    if ends:
        ins["file_size"] = max(ends)
    if ph.get("file_system"):
        ins["file_system"] = str(ph["file_system"])[:15]
    if kind in LIBRARY:
        ins["library"] = LIBRARY[kind]
    return ins, src


def _recorded(rep: Report) -> dict[int, dict]:
    """Smart mode's insights by report phase index, for the phases it learned."""
    out = {}
    smart = rep.data.get("smart")
    phases = smart.get("phases") if isinstance(smart, dict) else None
    for p in phases if isinstance(phases, list) else []:
        if (
            isinstance(p, dict)
            and p.get("role") == "learn"
            and isinstance(p.get("insights"), dict)
            and isinstance(p.get("phase"), int)
        ):
            try:  # smart mode's own reader: a damaged record is computed again from the report instead
                native.core().rules_explain(p["insights"])
            except ValueError:
                continue
            out[p["phase"]] = p["insights"]
    return out


def of_report(rep: Report) -> list[Unit]:
    """The units of a run report: its I/O library phases grouped as smart mode learns them."""
    recorded = _recorded(rep)
    units: dict[tuple, Unit] = {}
    for i, ph in enumerate(rep.phases):
        if ph.get("kind") not in LIBRARY or not (ph.get("bytes_written") or ph.get("bytes_read")):
            continue
        ident = ph.get("identity") or native.core().identity(ph.get("file", "?"))
        key = (ident, "create" if ph.get("created") else "open", ph.get("scope"))
        if key in units:
            units[key].phases.append(i)
            continue
        if i in recorded:
            ins, src = dict(recorded[i]), {"*": "recorded by smart mode during the run"}
        else:
            ins, src = report_phase(rep, i)
        units[key] = Unit(ident, key[1], key[2], ins, src, [i])
    return list(units.values())


# ---- Darshan logs (and profiles without a report)


def _xfer(coll: int | None, indep: int | None) -> str | None:
    if coll is None and indep is None:
        return None
    if coll and indep:
        return "mixed"
    return "collective" if coll else "independent" if indep else "none"


def _counter_locality(files: list[FileFacts], direction: str) -> str | None:
    ops = consec = seq = 0
    for f in files:
        d = f.posix_write if direction == "write" else f.posix_read
        if d is None or d.sequential_ops is None or not d.ops:
            continue
        ops += d.ops - f.ranks  # each rank's first access is no transition
        consec += d.consecutive_ops or 0
        seq += d.sequential_ops or 0
    if ops <= 0:
        return None
    if consec >= LOCALITY_PERCENT * ops:
        return "sequential"
    if seq >= LOCALITY_PERCENT * ops:
        return "strided"
    return "random"


def of_files(files: list[FileFacts], processes: int) -> tuple[dict, dict]:
    """(insights, where each came from) of one identity's files in a Darshan log."""
    ins: dict = {"identity": files[0].identity}
    src: dict = {}
    for direction in ("write", "read"):
        coll = [getattr(f, f"collective_{direction}s") for f in files]
        indep = [getattr(f, f"independent_{direction}s") for f in files]
        x = _xfer(
            sum(c or 0 for c in coll) if any(c is not None for c in coll) else None,
            sum(i or 0 for i in indep) if any(i is not None for i in indep) else None,
        )
        if x is not None:
            ins[f"{direction}_transfer"] = x
            src[f"{direction}_transfer"] = "MPI-IO collective / independent call counts"
        traced = _worst(getattr(f, direction).locality for f in files)
        loc = traced or _counter_locality(files, direction)
        if loc:
            ins[f"{direction}_locality"] = loc
            src[f"{direction}_locality"] = (
                "DXT offsets, smart mode's classifier" if traced else "POSIX consecutive / sequential counts"
            )
    medians = [d.median_size for f in files for d in (f.write, f.read) if d.median_size]
    common = [d.common_size for f in files for d in (f.write, f.read) if d.common_size]
    if medians:
        ins["transfer_size"] = max(medians)
        src["transfer_size"] = (
            "largest per-rank median size (DXT)"
            if any(d.per_rank_ops for f in files for d in (f.write, f.read))
            else "mean size (bytes / calls)"
        )
    elif common:
        ins["transfer_size"] = max(common)
        src["transfer_size"] = "most frequent access size (ACCESS1)"
    else:
        ops = sum(f.write.ops + f.read.ops for f in files)
        if ops:
            ins["transfer_size"] = sum(f.write.bytes + f.read.bytes for f in files) // ops
            src["transfer_size"] = "mean size (bytes / calls)"
    shared = any(f.shared for f in files)
    ins["files"] = "shared" if shared else "per_process"
    src["files"] = "ranks per path"
    ins["bytes_written"] = sum(f.write.bytes for f in files)
    ins["bytes_read"] = sum(f.read.bytes for f in files)
    ins["write_calls"] = sum(f.write.ops for f in files)
    ins["read_calls"] = sum(f.read.ops for f in files)
    ins["processes"] = max(1, min(processes, sum(f.ranks for f in files)))
    sizes = [d.max_offset for f in files for d in (f.posix_write, f.posix_read) if d and d.max_offset]
    if sizes:
        ins["file_size"] = max(sizes)
    same = []
    for f in files:
        for d in (f.write, f.read):
            if d.per_rank_ops:
                same.append(len(set(d.per_rank_ops.values())) == 1 and len(d.per_rank_ops) == f.ranks)
    if same:
        ins["same_calls"] = all(same)
        src["same_calls"] = "per-rank call counts (DXT)"
    fs = {f.file_system for f in files if f.file_system}
    if len(fs) == 1:
        ins["file_system"] = fs.pop()[:15]
    pfl = [(f.lustre or {}).get("pfl") for f in files]
    if any(pfl):
        ins["lustre_pfl"] = True
    return ins, src


def tuned_files(profile: Profile) -> dict[str, list[FileFacts]]:
    """A profile's files SmartIO tunes (written or read through HDF5 or MPI-IO), by identity."""
    groups: dict[str, list[FileFacts]] = defaultdict(list)
    for f in profile.data_files():
        if ("hdf5" in f.interfaces or "mpiio" in f.interfaces) and not f.path.startswith("<"):
            groups[f.identity or f.path].append(f)
    return groups


def of_profile(profile: Profile) -> list[Unit]:
    """The units of a profile: from its run report when it came from one (the same extraction as smart mode's
    report), else one per identity from Darshan's counters."""
    groups = tuned_files(profile)
    if profile.report is not None:
        units = of_report(profile.report)
        for u in units:
            u.files = groups.get(u.identity) or [
                f for f in profile.files if f.identity == u.identity or f.path == u.identity
            ]
        return units
    out = []
    for ident, files in groups.items():
        ins, src = of_files(files, profile.job.processes)
        out.append(Unit(ident, None, None, ins, src, [], files))
    return out
