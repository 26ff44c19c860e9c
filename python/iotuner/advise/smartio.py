"""SmartIO's insights (Table 1) from a Profile, through the C core's one rules
table (Table 2, native/src/core/rules.c): the same decisions smart mode makes
at run time, made here for a finished job.

The insights are extracted per phase identity (a file name with its numbers
normalized, as smart mode does), for files SmartIO tunes: those written or
read through HDF5 or MPI-IO. From a Darshan log:

| insight | from |
|---|---|
| write / read transfer | MPI-IO collective (COLL, SPLIT) and independent (INDEP, NB) call counts |
| transfer size | the largest per-rank median size in a DXT trace; else the most frequent access size (ACCESS1); else bytes / calls |
| locality | smart mode's classifier (C core) over the DXT offsets; else POSIX CONSEC / SEQ counts: 90% consecutive is sequential, 90% forward is strided, else random |
| shared file or one per process | a shared record (rank -1) or several ranks on one path: shared; else one per process |
| same calls | equal per-rank call counts in a DXT trace |
| file size | the highest offset (MAX_BYTE + 1) |
| file system | the LUSTRE module, else the mount table |
| progressive layouts | a Lustre layout with several components |

A run report from smart mode carries the insights the runtime extracted; they
are used as they are.
"""

from __future__ import annotations

from collections import defaultdict

from .. import native, settings
from .checks import Hit, _glob
from .profile import FileFacts, Profile

LOCALITY_PERCENT = 0.9  # as IOT_LOCALITY_PERCENT in the core


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


def _worst(values) -> str | None:
    order = {"sequential": 1, "strided": 2, "random": 3}
    vals = [v for v in values if v in order]
    return max(vals, key=order.get) if vals else None


def insights(files: list[FileFacts], processes: int) -> tuple[dict, dict]:
    """(insights JSON for the core, where each came from) of one identity's files."""
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


def _applicable(knob: str, files: list[FileFacts]) -> str | None:
    """Why a rule's knob cannot apply to these files (None: it can)."""
    layer = knob.split(".", 1)[0]
    if layer == "hdf5" and not any("hdf5" in f.interfaces for f in files):
        return "the files are not HDF5"
    if layer == "mpiio" and not any("mpiio" in f.interfaces for f in files):
        return "the files are not written through MPI-IO"
    if layer == "lustre" and not any((f.file_system or "").lower() == "lustre" for f in files):
        return "the files are not on Lustre"
    return None


def analyse(profile: Profile) -> tuple[list[dict], dict[int, list[Hit]]]:
    """(per identity: files, insights, their sources, the rules' decisions; hits by rule id)."""
    groups: dict[str, list[FileFacts]] = defaultdict(list)
    for f in profile.data_files():
        if ("hdf5" in f.interfaces or "mpiio" in f.interfaces) and not f.path.startswith("<"):
            groups[f.identity or f.path].append(f)
    core = native.core()
    chains, hits = [], defaultdict(list)
    for ident, files in groups.items():
        recorded = next((f.smart_insights for f in files if f.smart_insights), None)
        if recorded:
            ins, src = dict(recorded), {"*": "recorded by smart mode during the run"}
        else:
            ins, src = insights(files, profile.job.processes)
        try:
            decided = core.rules_explain(ins)
        except ValueError as e:  # insights the core refuses: say so, never crash
            chains.append(
                {"identity": ident, "files": [f.path for f in files], "insights": ins, "sources": src, "error": str(e)}
            )
            continue
        notes = {}
        typed = settings.flatten(decided["document"])  # the decisions as settings values (the rules give text)
        for fired in decided["fired"]:
            sets = {k: typed.get(k, v) for k, v in (fired.get("set") or {}).items() if k in typed}
            usable = {}
            for knob, value in sets.items():
                why = _applicable(knob, files)
                if why:
                    notes[knob] = why
                else:
                    usable[knob] = value
            ev = {"identity": ident, "reason": fired.get("reason"), "insights": ins}
            if sets and not usable:
                ev["not_applicable"] = {k: notes[k] for k in sets}
            hits[fired["rule"]].append(
                Hit(
                    ev,
                    [f.path for f in files][:10],
                    usable,
                    [_glob(files[0])] if usable else None,
                    level="info" if usable else "ok",
                )
            )
        chains.append(
            {
                "identity": ident,
                "files": [f.path for f in files][:20],
                "file_count": len(files),
                "insights": ins,
                "sources": src,
                "fired": decided["fired"],
                "settings": decided["settings"],
                "not_applicable": notes,
            }
        )
    return chains, hits
