"""A Darshan log's facts (darshan_reader) as a Profile.

Per file: the POSIX, MPI-IO, STDIO, HDF5, PnetCDF and Lustre records of every
rank, summed; a shared record (rank -1, Darshan's reduction over all ranks)
counts for every process. A PnetCDF file's variables (PNETCDF_VAR) give the
application's level: its puts and gets, blocking or not, collective or not. DXT traces, when present, give what
counters cannot:
spatial locality as smart mode classifies it, per-rank call counts and
median sizes, and the nodes (host names).
"""

from __future__ import annotations

from collections import defaultdict

from .. import native
from .profile import Direction, FileFacts, Job, Profile

KiB, MiB, GiB = 1024, 1024**2, 1024**3
# Darshan's size histogram bins (counter suffix -> exclusive upper bound)
SIZE_BINS = (
    ("0_100", 100),
    ("100_1K", KiB),
    ("1K_10K", 10 * KiB),
    ("10K_100K", 100 * KiB),
    ("100K_1M", MiB),
    ("1M_4M", 4 * MiB),
    ("4M_10M", 10 * MiB),
    ("10M_100M", 100 * MiB),
    ("100M_1G", GiB),
    ("1G_PLUS", float("inf")),
)
HDF5_EXTENSIONS = (".h5", ".hdf5", ".he5", ".h5part")
_LOCALITY_ORDER = {"unknown": 0, "sequential": 1, "strided": 2, "random": 3}


def _sum(recs: list[dict], key: str, part: str = "counters") -> int | float:
    return sum(r.get(part, {}).get(key, 0) for r in recs)


def _max(recs: list[dict], key: str, part: str = "counters"):
    vals = [r.get(part, {}).get(key) for r in recs if key in r.get(part, {})]
    return max(vals) if vals else None


def _common_size(recs: list[dict], prefix: str) -> int | None:
    """The most frequent access size over the records (Darshan's ACCESS1..4 counters)."""
    counts: dict[int, int] = defaultdict(int)
    for r in recs:
        c = r.get("counters", {})
        for i in range(1, 5):
            size, n = c.get(f"{prefix}_ACCESS{i}_ACCESS"), c.get(f"{prefix}_ACCESS{i}_COUNT", 0)
            if size and n:
                counts[size] += n
    return max(counts, key=lambda s: (counts[s], s)) if counts else None


def _posix_direction(recs: list[dict], d: str) -> Direction:
    up = "WRITE" if d == "write" else "READ"
    word = "WRITTEN" if d == "write" else "READ"
    return Direction(
        ops=_sum(recs, f"POSIX_{up}S"),
        bytes=_sum(recs, f"POSIX_BYTES_{word}"),
        size_histogram={upper: _sum(recs, f"POSIX_SIZE_{up}_{suffix}") for suffix, upper in SIZE_BINS},
        consecutive_ops=_sum(recs, f"POSIX_CONSEC_{up}S"),
        sequential_ops=_sum(recs, f"POSIX_SEQ_{up}S"),
        max_offset=(m + 1) if (m := _max(recs, f"POSIX_MAX_BYTE_{word}")) is not None and m >= 0 else None,
        time_s=_sum(recs, f"POSIX_F_{up}_TIME", "fcounters"),
        common_size=_common_size(recs, "POSIX"),
    )


def _mpiio_direction(recs: list[dict], d: str) -> Direction:
    up = "WRITE" if d == "write" else "READ"
    word = "WRITTEN" if d == "write" else "READ"
    ops = sum(_sum(recs, f"MPIIO_{k}_{up}S") for k in ("INDEP", "COLL", "SPLIT", "NB"))
    return Direction(
        ops=ops,
        bytes=_sum(recs, f"MPIIO_BYTES_{word}"),
        size_histogram={upper: _sum(recs, f"MPIIO_SIZE_{up}_AGG_{suffix}") for suffix, upper in SIZE_BINS},
        time_s=_sum(recs, f"MPIIO_F_{up}_TIME", "fcounters"),
        common_size=_common_size(recs, "MPIIO"),
    )


def _pnetcdf_direction(recs: list[dict], d: str) -> Direction:
    """A PnetCDF file's puts (gets): its variables' records summed (independent, collective and nonblocking)."""
    up = "WRITE" if d == "write" else "READ"
    word = "WRITTEN" if d == "write" else "READ"
    ops = sum(_sum(recs, f"PNETCDF_VAR_{k}_{up}S") for k in ("INDEP", "COLL", "NB"))
    return Direction(
        ops=ops,
        bytes=_sum(recs, f"PNETCDF_VAR_BYTES_{word}"),
        size_histogram={upper: _sum(recs, f"PNETCDF_VAR_SIZE_{up}_AGG_{suffix}") for suffix, upper in SIZE_BINS},
        time_s=_sum(recs, f"PNETCDF_VAR_F_{up}_TIME", "fcounters"),
        common_size=_common_size(recs, "PNETCDF_VAR"),
    )


def _pnetcdf_split(f: FileFacts, file_recs: list[dict], var_recs: list[dict]) -> None:
    """Collective and independent puts and gets at the PnetCDF level: the _all calls are collective, the
    independent ones not, and the nonblocking ones are what completed them (ncmpi_wait_all collective,
    ncmpi_wait in independent mode not)."""
    collective_waits = _sum(file_recs, "PNETCDF_FILE_COLL_WAITS")
    independent_waits = _sum(file_recs, "PNETCDF_FILE_INDEP_WAITS")
    for d in ("write", "read"):
        up = "WRITE" if d == "write" else "READ"
        nb = _sum(var_recs, f"PNETCDF_VAR_NB_{up}S")
        coll = _sum(var_recs, f"PNETCDF_VAR_COLL_{up}S") + (nb if collective_waits else 0)
        indep = _sum(var_recs, f"PNETCDF_VAR_INDEP_{up}S") + (nb if independent_waits and not collective_waits else 0)
        setattr(f, f"collective_{d}s", coll)
        setattr(f, f"independent_{d}s", indep)
        setattr(f, f"nonblocking_{d}s", nb)


def _apply_dxt(direction: Direction, traces: list[dict], d: str) -> None:
    """Locality (worst over ranks), per-rank calls and the largest per-rank median size, from DXT."""
    parts = [(t["rank"], t[d]) for t in traces if t.get(d)]
    if not parts:
        return
    direction.locality = max((p["locality"] for _, p in parts), key=lambda c: _LOCALITY_ORDER.get(c, 0))
    direction.median_size = max(p["median_size"] for _, p in parts)
    direction.per_rank_ops = {rank: p["count"] for rank, p in parts}


def _mount(path: str, mounts: list[list[str]]) -> str | None:
    best = None
    for point, fs in mounts:
        p = point.rstrip("/") or "/"
        if (path == p or path.startswith(p + "/") or p == "/") and (best is None or len(p) > len(best[0])):
            best = (p, fs)
    return best[1] if best else None


def _lustre(recs: list[dict]) -> dict | None:
    comps = [c for r in recs for c in r.get("components", [])]
    if not comps:
        counters = [r.get("counters", {}) for r in recs]
        width = next((c["LUSTRE_STRIPE_WIDTH"] for c in counters if "LUSTRE_STRIPE_WIDTH" in c), None)
        size = next((c["LUSTRE_STRIPE_SIZE"] for c in counters if "LUSTRE_STRIPE_SIZE" in c), None)
        return {"stripe_count": width, "stripe_size": size, "components": 1} if (width or size) else {}
    first = comps[0]
    osts = sorted({o for c in comps for o in c.get("LUSTRE_OST_IDS") or []})
    return {
        "stripe_count": first.get("LUSTRE_COMP_STRIPE_COUNT"),
        "stripe_size": first.get("LUSTRE_COMP_STRIPE_SIZE"),
        "components": len(comps),
        "pfl": len(comps) > 1 or None,
        "osts": osts,
    }


def build(facts: dict, path: str) -> Profile:
    job_meta = facts.get("job", {})
    nprocs = int(job_meta.get("nprocs") or 1)
    modules = facts.get("modules", {})
    by_id: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for module, recs in facts.get("records", {}).items():
        for r in recs:
            by_id[r["id"]][module].append(r)
    names = facts.get("names", {})
    # HDF5 datasets are named "file:/dataset": their records belong to the file
    h5d_by_file: dict[str, list[dict]] = defaultdict(list)
    path_ids = {v: k for k, v in names.items()}
    for r in facts.get("records", {}).get("H5D", []):
        name = names.get(r["id"], "")
        file_path = name.split(":/", 1)[0] if ":/" in name else None
        if file_path and file_path in path_ids:
            h5d_by_file[path_ids[file_path]].append(r)
    # a PnetCDF file's variables: by their file's record id (Darshan 3.4.5: "file:variable" names otherwise)
    pnc_by_file: dict[str, list[dict]] = defaultdict(list)
    for r in facts.get("records", {}).get("PNETCDF_VAR", []):
        file_id = r.get("file_rec_id")
        if not file_id or file_id == "0":
            file_id = path_ids.get(names.get(r["id"], "").rsplit(":", 1)[0])
        if file_id:
            pnc_by_file[file_id].append(r)
    dxt: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    hosts = set()
    for module, traces in facts.get("dxt", {}).items():
        for t in traces:
            dxt[t["id"]][module].append(t)
            if t.get("hostname"):
                hosts.add(t["hostname"])
    mounts = facts.get("mounts", [])
    core = native.core()
    files = []
    for fid, mods in by_id.items():
        if set(mods) <= {"H5D", "PNETCDF_VAR"}:
            continue  # a dataset or a variable: folded into its file
        fpath = names.get(fid, fid)
        posix, mpiio, stdio = mods.get("POSIX", []), mods.get("MPI-IO", []), mods.get("STDIO", [])
        all_recs = posix + mpiio + stdio + mods.get("H5F", []) + mods.get("PNETCDF_FILE", [])
        rank_ids = sorted({r["rank"] for r in all_recs})
        reduced = -1 in rank_ids
        ranks = nprocs if reduced else max(1, len(rank_ids))
        f = FileFacts(
            path=fpath,
            identity=core.identity(fpath) if not fpath.startswith("<") else fpath,
            ranks=ranks,
            rank_ids=None if reduced else rank_ids,
            shared=ranks > 1,
        )
        h5d = h5d_by_file.get(fid, [])
        # logs older than Darshan's HDF5 modules: the extension says it (as Drishti reads it)
        hdf5 = bool(h5d or mods.get("H5F")) or ("H5F" not in modules and fpath.lower().endswith(HDF5_EXTENSIONS))
        pnc_file, pnc_vars = mods.get("PNETCDF_FILE", []), pnc_by_file.get(fid, [])
        f.pnetcdf = bool(pnc_file or pnc_vars)  # Darshan 3.4.5's PNETCDF_FILE and PNETCDF_VAR modules
        f.interfaces = [
            i
            for i, present in (
                ("pnetcdf", f.pnetcdf),
                ("hdf5", hdf5),
                ("mpiio", bool(mpiio)),
                ("posix", bool(posix)),
                ("stdio", bool(stdio)),
            )
            if present
        ]
        f.file_system = "lustre" if mods.get("LUSTRE") else _mount(fpath, mounts)
        if posix:
            f.posix_write, f.posix_read = _posix_direction(posix, "write"), _posix_direction(posix, "read")
            f.file_not_aligned = _sum(posix, "POSIX_FILE_NOT_ALIGNED")
            f.mem_not_aligned = _sum(posix, "POSIX_MEM_NOT_ALIGNED")
            f.file_alignment = _max(posix, "POSIX_FILE_ALIGNMENT")
            f.meta_time_s = _sum(posix, "POSIX_F_META_TIME", "fcounters")
            f.io_time_s = f.meta_time_s + f.posix_write.time_s + f.posix_read.time_s
            meta: dict[int, float] = defaultdict(float)
            for r in posix:
                t = r.get("fcounters", {}).get("POSIX_F_META_TIME", 0.0)
                if r["rank"] == -1:  # a shared record sums its ranks: spread it evenly
                    for rank in range(nprocs):
                        meta[rank] += t / nprocs
                else:
                    meta[r["rank"]] += t
            f.rank_meta_time_s = dict(meta)
            shared = [r for r in posix if r["rank"] == -1]
            if shared:
                c, fc = shared[0].get("counters", {}), shared[0].get("fcounters", {})
                f.slowest_rank_bytes, f.fastest_rank_bytes = (
                    c.get("POSIX_SLOWEST_RANK_BYTES", 0),
                    c.get("POSIX_FASTEST_RANK_BYTES", 0),
                )
                f.slowest_rank_time_s = fc.get("POSIX_F_SLOWEST_RANK_TIME", 0.0)
                f.fastest_rank_time_s = fc.get("POSIX_F_FASTEST_RANK_TIME", 0.0)
            elif len(posix) > 1:
                f.per_rank_bytes_written = {
                    r["rank"]: r.get("counters", {}).get("POSIX_BYTES_WRITTEN", 0) for r in posix
                }
                f.per_rank_bytes_read = {r["rank"]: r.get("counters", {}).get("POSIX_BYTES_READ", 0) for r in posix}
        if mpiio:
            f.collective_writes = _sum(mpiio, "MPIIO_COLL_WRITES") + _sum(mpiio, "MPIIO_SPLIT_WRITES")
            f.independent_writes = _sum(mpiio, "MPIIO_INDEP_WRITES") + _sum(mpiio, "MPIIO_NB_WRITES")
            f.collective_reads = _sum(mpiio, "MPIIO_COLL_READS") + _sum(mpiio, "MPIIO_SPLIT_READS")
            f.independent_reads = _sum(mpiio, "MPIIO_INDEP_READS") + _sum(mpiio, "MPIIO_NB_READS")
            f.nonblocking_writes = _sum(mpiio, "MPIIO_NB_WRITES")
            f.nonblocking_reads = _sum(mpiio, "MPIIO_NB_READS")
        f.stdio_bytes = _sum(stdio, "STDIO_BYTES_WRITTEN") + _sum(stdio, "STDIO_BYTES_READ")
        # the application's level: what it asked for
        if pnc_vars:
            f.write, f.read = _pnetcdf_direction(pnc_vars, "write"), _pnetcdf_direction(pnc_vars, "read")
            _pnetcdf_split(f, pnc_file, pnc_vars)
        elif mpiio:
            f.write, f.read = _mpiio_direction(mpiio, "write"), _mpiio_direction(mpiio, "read")
        elif posix:
            f.write, f.read = f.posix_write, f.posix_read
        traces = dxt.get(fid, {})
        level = traces.get("MPIIO") or traces.get("POSIX") or []
        _apply_dxt(f.write, level, "write")
        _apply_dxt(f.read, level, "read")
        if f.posix_write is not None and traces.get("POSIX"):
            _apply_dxt(f.posix_write, traces["POSIX"], "write")
            _apply_dxt(f.posix_read, traces["POSIX"], "read")
        if mods.get("LUSTRE"):
            f.lustre = _lustre(mods["LUSTRE"])
        files.append(f)
    partial = [m for m, v in modules.items() if v.get("partial")]
    job = Job(
        source="darshan",
        input=path,
        processes=nprocs,
        nodes=len(hosts) or None,
        nodes_from="host names in the DXT trace" if hosts else None,
        runtime_s=job_meta.get("run_time"),
        executable=(facts.get("exe") or "").split(" ")[0],
        jobid=str(job_meta.get("jobid")) if job_meta.get("jobid") is not None else None,
        log_version=facts.get("log_version"),
        modules={m: {"records": v.get("records")} for m, v in modules.items()},
        has_dxt=bool(facts.get("dxt")),
    )
    if partial:
        job.notes.append(f"partial: {', '.join(partial)}")
    return Profile(job=job, files=files)
