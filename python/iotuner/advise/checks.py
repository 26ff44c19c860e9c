"""The checks of `iotuner advise`: one table, one row per check.

Each row says what it looks for (code, level, title), where the idea comes
from (source: Drishti's finding codes, SmartIO, iotuner's run report), the
thresholds it reads (THRESHOLDS, overridable with a JSON file), the knobs its
fixes may set, and the recommendation, apart from the one that needs code
changes. Its `test` turns a Profile into hits (evidence, affected files,
knob values) or says why it could not be evaluated. SmartIO's rules are not
here: they come from the C core's one rules table (iotuner/recommend/rules.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..render import fmt_bytes
from .profile import FileFacts, Profile

LEVELS = ("high", "warn", "info", "ok")
KiB, MiB = 1024, 1024**2


@dataclass(frozen=True)
class Threshold:
    name: str
    default: float
    unit: str
    meaning: str
    source: str


THRESHOLDS = {
    t.name: t
    for t in (
        Threshold(
            "small_bytes",
            MiB,
            "bytes",
            "a request below this size is small (Darshan's bins: 100, 1K, 10K, 100K, 1M, 4M, 10M, 100M, 1G)",
            "Drishti small_bytes",
        ),
        Threshold(
            "small_fraction",
            0.1,
            "fraction",
            "small requests, as a fraction of all requests, that make a finding",
            "Drishti small_requests",
        ),
        Threshold(
            "small_count", 1000, "requests", "and at least this many small requests", "Drishti small_requests_absolute"
        ),
        Threshold(
            "misaligned_fraction",
            0.1,
            "fraction",
            "requests not aligned to the file system block (Darshan's FILE_ALIGNMENT), as a fraction of all requests",
            "Drishti misaligned_requests",
        ),
        Threshold(
            "random_fraction",
            0.2,
            "fraction",
            "requests that do not move forward in the file, as a fraction of all requests",
            "Drishti random_operations",
        ),
        Threshold(
            "random_count", 1000, "requests", "and at least this many of them", "Drishti random_operations_absolute"
        ),
        Threshold(
            "imbalance_stragglers",
            0.15,
            "fraction",
            "(slowest - fastest rank) / total of a shared file, in bytes or in time",
            "Drishti imbalance_stragglers",
        ),
        Threshold(
            "imbalance_size",
            0.3,
            "fraction",
            "(largest - smallest) / largest bytes of the ranks' files or records",
            "Drishti imbalance_size",
        ),
        Threshold(
            "stdio_fraction", 0.1, "fraction", "STDIO bytes as a fraction of all bytes", "Drishti interface_stdio"
        ),
        Threshold(
            "independent_count",
            1000,
            "calls",
            "independent MPI-IO calls on shared files, with no collective one, that make a finding",
            "Drishti collective_operations_absolute",
        ),
        Threshold(
            "metadata_time_s",
            30,
            "seconds",
            "a rank's POSIX metadata time (open, stat, seek, ...) over all files that makes a finding",
            "Drishti metadata_time_rank",
        ),
        Threshold(
            "redundant_ratio",
            1.1,
            "ratio",
            "bytes moved / highest offset of a file: above it, data was moved more than once",
            "iotuner, for Drishti P09 / P10 (whose test fires when the highest offset "
            "exceeds the bytes, the opposite of its message); 10% left for metadata rewrites",
        ),
        Threshold(
            "straggler_factor",
            2.0,
            "ratio",
            "a file of a per-process group whose I/O time exceeds this multiple of the group's median is a straggler",
            "iotuner (Drishti's P19 covers shared files only)",
        ),
        Threshold(
            "write_amplification",
            2.0,
            "ratio",
            "POSIX bytes written / the application's bytes of a phase (run reports)",
            "iotuner run report (docs/report.md)",
        ),
        Threshold(
            "high_min_requests",
            100,
            "requests",
            "the count floor of a high finding that has no count threshold "
            "of its own (misaligned requests or buffers, stragglers on shared files, unequal per-rank files, "
            "write amplification): the files it concerns made at least this many requests; with fewer it is "
            "info, since fixing a handful of requests saves little",
            "iotuner; Drishti's own floors are "
            "small_requests_absolute and random_operations_absolute (1000), with none on these checks",
        ),
    )
}


class ThresholdError(ValueError):
    pass


def thresholds(overrides: dict | None = None) -> dict[str, float]:
    """The defaults with overrides applied; ThresholdError names an unknown or bad one."""
    out = {n: t.default for n, t in THRESHOLDS.items()}
    for name, value in (overrides or {}).items():
        if name not in THRESHOLDS:
            raise ThresholdError(f"unknown threshold '{name}' (known: {', '.join(THRESHOLDS)})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ThresholdError(f"threshold '{name}' must be a non-negative number, not {value!r}")
        if THRESHOLDS[name].unit == "fraction" and value > 1:
            raise ThresholdError(f"threshold '{name}' is a fraction: between 0 and 1, not {value}")
        out[name] = value
    return out


@dataclass
class Hit:
    evidence: dict[str, Any]
    files: list[str] = field(default_factory=list)
    knobs: dict[str, Any] = field(default_factory=dict)  # settings that address it
    knob_files: list[str] | None = None  # file globs the knobs apply to (None: every file)
    message: str | None = None  # replaces the row's message
    level: str | None = None  # replaces the row's level
    recommendation: str | None = None  # replaces the row's recommendation (e.g. by file format)


class NotEvaluated(Exception):
    """The input has no data for this check (said, not guessed)."""


@dataclass(frozen=True)
class Check:
    code: str
    level: str
    title: str
    source: str
    thresholds: tuple[str, ...]
    knobs: tuple[str, ...]
    message: str
    recommendation: str
    code_change: str | None
    test: Callable[[Profile, dict], list[Hit]]
    # settings its recommendation rules out for its files ((knob, value) pairs): a fix of a finding that ranks
    # lower and would set one of them is left out (fixes.build), so the advice never undoes its own advice
    keeps: tuple[tuple[str, Any], ...] = ()


# ---- helpers ----


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def _size(n: float) -> str:

    return fmt_bytes(n)


def _top(files: list[tuple[FileFacts, float]], n: int = 10) -> list[str]:
    """The files that contribute most, largest first."""
    return [f.path for f, v in sorted(files, key=lambda fv: -fv[1]) if v > 0][:n]


def _glob(f: FileFacts) -> str:
    """A file glob for a file's identity: its base name with the numbers as '*'."""
    base = (f.identity or f.path).rsplit("/", 1)[-1]
    return base.replace("#", "*") or "*"


def _posix_files(p: Profile, direction: str):
    for f in p.files:
        d = f.posix_write if direction == "write" else f.posix_read
        if d is not None and d.ops:
            yield f, d


def _uses_hdf5_mpiio(f: FileFacts) -> bool:
    return "hdf5" in f.interfaces and "mpiio" in f.interfaces


def _same_calls(f: FileFacts, direction: str) -> bool | None:
    d = f.write if direction == "write" else f.read
    if not d.per_rank_ops:
        return None
    counts = set(d.per_rank_ops.values())
    return len(counts) == 1 and len(d.per_rank_ops) == f.ranks


def _collective_fix(files: list[FileFacts], direction: str) -> tuple[dict, list[str] | None]:
    """hdf5.transfer_mode collective where it is safe: HDF5 on MPI-IO, and a trace shows every rank makes the
    same number of calls (a collective H5Dwrite that one rank never makes hangs the job)."""
    safe = [f for f in files if _uses_hdf5_mpiio(f) and f.shared and _same_calls(f, direction)]
    if safe:
        return {"hdf5.transfer_mode": "collective"}, sorted({_glob(f) for f in safe})
    return {}, None


def floor(hit: Hit, requests: int, th: dict) -> Hit:
    """A high finding on fewer requests than the count floor becomes info (evidence says so)."""
    if requests < th["high_min_requests"]:
        hit.level = "info"
        hit.evidence["count_floor"] = {"requests": requests, "high_min_requests": int(th["high_min_requests"])}
    return hit


def _requests(files) -> int:
    return sum((f.posix_write.ops + f.posix_read.ops) if f.posix_write else (f.write.ops + f.read.ops) for f in files)


NETCDF_EXTENSIONS = (".nc", ".nc4", ".cdf", ".netcdf")


def file_format(f: FileFacts) -> str:
    """hdf5, netcdf-4 (netCDF on HDF5), netcdf (classic or PnetCDF) or other: what a recommendation may name."""
    netcdf = f.pnetcdf or f.path.lower().endswith(NETCDF_EXTENSIONS)
    if "hdf5" in f.interfaces:
        return "netcdf-4" if netcdf else "hdf5"
    return "netcdf" if netcdf else "other"


ALIGN_ADVICE = {
    "hdf5": "align HDF5 objects to the block or stripe size (hdf5.alignment)",
    "netcdf-4": "align the HDF5 objects under netCDF-4 to the block or stripe size (hdf5.alignment)",
    "netcdf": "align netCDF's header and variables to the block or stripe size: PnetCDF's hints "
    "nc_header_align_size and nc_var_align_size (pnetcdf.nc_var_align_size under iotuner run, or "
    "PNETCDF_HINTS), or nc__enddef's alignment for classic netCDF",
    "other": "make requests start at multiples of the block or stripe size",
}


# ---- the tests ----


def _stdio(p: Profile, th: dict) -> list[Hit]:
    stdio = sum(f.stdio_bytes for f in p.files)
    total = sum(f.write.bytes + f.read.bytes for f in p.files) + stdio
    counted = p.report is not None and "stdio" in p.report.data.get("sections", {})  # a report with the level
    if not any("stdio" in f.interfaces for f in p.files) and p.job.source == "run-report" and not counted:
        raise NotEvaluated("this run report does not count STDIO streams (made before iotuner counted them)")
    if total and stdio / total > th["stdio_fraction"]:
        return [
            Hit(
                {"stdio_bytes": stdio, "total_bytes": total, "fraction": stdio / total},
                _top([(f, f.stdio_bytes) for f in p.files]),
            )
        ]
    return []


def _no_mpiio(p: Profile, th: dict) -> list[Hit]:
    if p.job.processes < 2:
        return []
    moved = [f for f in p.files if f.write.bytes + f.read.bytes > 0 and not f.path.startswith("<")]
    if moved and not any("mpiio" in f.interfaces for f in p.files):
        nbytes = sum(f.write.bytes + f.read.bytes for f in moved)
        return [
            Hit(
                {"processes": p.job.processes, "posix_bytes": nbytes, "files": len(moved)},
                _top([(f, f.write.bytes + f.read.bytes) for f in moved]),
            )
        ]
    return []


def _small(direction: str):
    def test(p: Profile, th: dict) -> list[Hit]:
        files = list(_posix_files(p, direction))
        if files and all(d.size_histogram is None for _, d in files):
            raise NotEvaluated("no request size histogram (run reports give only mean sizes)")
        ops = sum(d.ops for _, d in files)
        small = [(f, d.ops_below(int(th["small_bytes"])) or 0) for f, d in files]
        n = sum(v for _, v in small)
        if not ops or n / ops <= th["small_fraction"] or n <= th["small_count"]:
            return []
        shared = sum(v for f, v in small if f.shared)
        knobs, glob = _collective_fix([f for f, v in small if v], direction)
        return [
            Hit(
                {
                    "small_requests": n,
                    "requests": ops,
                    "fraction": n / ops,
                    "small_bytes": int(th["small_bytes"]),
                    "to_shared_files": shared,
                },
                _top(small),
                knobs,
                glob,
            )
        ]

    return test


def _misaligned_file(p: Profile, th: dict) -> list[Hit]:
    files = [f for f in p.files if f.file_not_aligned is not None]
    if not files:
        raise NotEvaluated("no alignment counters (Darshan's POSIX module has them; run reports do not)")
    ops = sum((f.posix_write.ops + f.posix_read.ops) for f in files if f.posix_write)
    bad = sum(f.file_not_aligned for f in files)
    if not ops or bad / ops <= th["misaligned_fraction"]:
        return []
    contrib = [(f, f.file_not_aligned) for f in files]
    hdf5 = [f for f, v in contrib if v and "hdf5" in f.interfaces]  # HDF5 files, netCDF-4 included
    pnetcdf = [f for f, v in contrib if v and f.pnetcdf]  # PnetCDF aligns through its hints
    align = max((f.lustre or {}).get("stripe_size") or f.file_alignment or 0 for f, _ in contrib)
    align = align if align >= 4 * KiB else MiB
    knobs = {"hdf5.alignment": [0, align]} if hdf5 else {}
    knobs.update({"pnetcdf.nc_var_align_size": align} if pnetcdf else {})
    formats = sorted({file_format(f) for f, v in contrib if v}, key=list(ALIGN_ADVICE).index)
    return [
        floor(
            Hit(
                {
                    "misaligned_requests": bad,
                    "requests": ops,
                    "fraction": bad / ops,
                    "file_alignment": max(f.file_alignment or 0 for f in files),
                    "formats": formats,
                },
                _top(contrib),
                knobs,
                sorted({_glob(f) for f in hdf5 + pnetcdf}) if knobs else None,
                recommendation="; ".join(
                    (f"{fmt} files: " if len(formats) > 1 else "") + ALIGN_ADVICE[fmt] for fmt in formats
                ),
            ),
            ops,
            th,
        )
    ]


def _misaligned_memory(p: Profile, th: dict) -> list[Hit]:
    files = [f for f in p.files if f.mem_not_aligned is not None]
    if not files:
        raise NotEvaluated("no memory alignment counters (Darshan's POSIX module has them; run reports do not)")
    ops = sum((f.posix_write.ops + f.posix_read.ops) for f in files if f.posix_write)
    bad = sum(f.mem_not_aligned for f in files)
    if ops and bad / ops > th["misaligned_fraction"]:
        return [
            floor(
                Hit(
                    {"misaligned_buffers": bad, "requests": ops, "fraction": bad / ops},
                    _top([(f, f.mem_not_aligned) for f in files]),
                ),
                ops,
                th,
            )
        ]
    return []


def _random_counts(p: Profile, direction: str):
    files = list(_posix_files(p, direction))
    if files and all(d.sequential_ops is None and d.locality is None for _, d in files):
        raise NotEvaluated("no access order (Darshan's sequential counters or a DXT trace; run reports have neither)")
    ops = sum(d.ops for _, d in files)
    rnd = [(f, max(0, d.ops - (d.sequential_ops or 0))) for f, d in files]
    consec = sum(d.consecutive_ops or 0 for _, d in files)
    seq = sum((d.sequential_ops or 0) - (d.consecutive_ops or 0) for _, d in files)
    return files, ops, rnd, consec, seq


def _random(direction: str):
    def test(p: Profile, th: dict) -> list[Hit]:
        files, ops, rnd, _, _ = _random_counts(p, direction)
        n = sum(v for _, v in rnd)
        if not ops or n / ops <= th["random_fraction"] or n <= th["random_count"]:
            return []
        traced = {f.path: d.locality for f, d in files if d.locality}
        return [
            Hit(
                {"random_requests": n, "requests": ops, "fraction": n / ops, "trace_locality": traced or None},
                _top(rnd),
            )
        ]

    return test


def _sequential(p: Profile, th: dict) -> list[Hit]:
    hits = []
    for direction in ("write", "read"):
        files, ops, rnd, consec, seq = _random_counts(p, direction)
        if ops and sum(v for _, v in rnd) / ops <= th["random_fraction"]:
            hits.append(
                Hit(
                    {"direction": direction, "requests": ops, "consecutive": consec / ops, "sequential": seq / ops},
                    message=f"{direction}s are mostly consecutive ({_pct(consec / ops)}) and sequential "
                    f"({_pct(seq / ops)}) over {ops:,} requests",
                )
            )
    return hits


def _redundant(direction: str):
    def test(p: Profile, th: dict) -> list[Hit]:
        files = [(f, d) for f, d in _posix_files(p, direction) if d.max_offset]
        if not files:
            raise NotEvaluated(
                "no highest offsets (Darshan's POSIX counters; a run report has write amplification instead)"
            )
        over = [(f, d.bytes / d.max_offset) for f, d in files if d.bytes / d.max_offset > th["redundant_ratio"]]
        if not over:
            return []
        extra = sum(d.bytes - d.max_offset for f, d in files if d.bytes / d.max_offset > th["redundant_ratio"])
        worst = max(r for _, r in over)
        return [Hit({"files": len(over), "extra_bytes": extra, "worst_ratio": worst}, _top(over))]

    return test


def _write_amplification(p: Profile, th: dict) -> list[Hit]:
    files = [f for f in p.files if f.write_amplification is not None]
    if not files:
        raise NotEvaluated("no write amplification (iotuner run reports have it; Darshan logs do not)")
    hits = []
    for f in files:
        amp = f.write_amplification
        if not amp or amp < th["write_amplification"] or not f.write.bytes:
            continue
        hints = f.mpi_hints or {}
        reads = f.posix_read.bytes if f.posix_read and not f.read.bytes else 0
        aggregators = len((hints.get("romio_aggregator_list") or "").split()) or None
        ev = {
            "write_amplification": amp,
            "data_written": f.write.bytes,
            "posix_written": f.posix_write.bytes if f.posix_write else None,
            "posix_read_in_write_phase": reads,
            "romio_cb_write": hints.get("romio_cb_write"),
            "romio_ds_write": hints.get("romio_ds_write"),
            "aggregators": aggregators,
            "ranks": f.ranks,
        }
        knobs: dict[str, Any] = {}
        if hints.get("romio_cb_write") == "enable":
            knobs["mpiio.romio_cb_write"] = "automatic"
            why = (
                f"collective buffering is forced on (romio_cb_write=enable) through {aggregators or '?'} "
                f"aggregator(s) for {f.ranks} ranks: the aggregators read and rewrite the holes between "
                "the ranks' pieces"
            )
            if reads >= f.write.bytes and _uses_hdf5_mpiio(f):
                # at least as many bytes of holes as of data: each call's pieces lie far apart, so collective
                # buffering has nothing to merge; independent transfers write only the pieces (and never hang:
                # it is the switch to collective that needs every rank)
                knobs["hdf5.transfer_mode"] = "independent"
                why += (
                    f"; {reads / f.write.bytes:.1f} bytes of holes per byte of data: the pieces of each "
                    "collective call lie far apart, nothing to merge, so independent transfers"
                )
        elif hints.get("romio_ds_write") in ("enable", "automatic") and reads:
            knobs["mpiio.romio_ds_write"] = "disable"
            why = "data sieving reads and rewrites whole buffers around independent noncontiguous writes"
        else:
            why = "the cause is not in the report (HDF5 metadata rewrites, small unaligned writes)"
        hits.append(
            floor(
                Hit(
                    ev,
                    [f.path],
                    knobs,
                    [_glob(f)] if knobs else None,
                    message=f"the file system saw {amp:.1f}x the data written to {f.path}"
                    + (f" and {_size(reads)} read back in a phase that only writes" if reads else "")
                    + f": {why}",
                ),
                _requests([f]),
                th,
            )
        )
    return hits


def _metadata(p: Profile, th: dict) -> list[Hit]:
    files = [f for f in p.files if f.rank_meta_time_s is not None or f.meta_time_s is not None]
    if not files:
        raise NotEvaluated("no metadata time")
    per_rank: dict[int, float] = {}
    for f in files:
        if f.rank_meta_time_s is not None:
            for r, t in f.rank_meta_time_s.items():
                per_rank[r] = per_rank.get(r, 0.0) + t
        else:  # a run report: the slowest rank's time per phase
            per_rank[-1] = per_rank.get(-1, 0.0) + (f.meta_time_s or 0.0)
    slow = {r: t for r, t in per_rank.items() if t > th["metadata_time_s"]}
    if not slow:
        return []
    hdf5 = [f for f in files if _uses_hdf5_mpiio(f) and f.shared]
    knobs = {"hdf5.coll_metadata_reads": True, "hdf5.coll_metadata_writes": True} if hdf5 else {}
    return [
        Hit(
            {"ranks": len(slow), "worst_s": max(slow.values()), "threshold_s": th["metadata_time_s"]},
            _top([(f, f.meta_time_s or 0.0) for f in files]),
            knobs,
            sorted({_glob(f) for f in hdf5}) if knobs else None,
        )
    ]


def _shared_imbalance(kind: str):
    def test(p: Profile, th: dict) -> list[Hit]:
        files = [f for f in p.files if f.slowest_rank_time_s is not None]
        if not files:
            raise NotEvaluated("no slowest / fastest rank counters (Darshan's shared-file records have them)")
        bad = []
        for f in files:
            if kind == "bytes":
                total = (
                    f.write.bytes + f.read.bytes
                    if "mpiio" not in f.interfaces
                    else ((f.posix_write.bytes + f.posix_read.bytes) if f.posix_write else 0)
                )
                diff = abs((f.slowest_rank_bytes or 0) - (f.fastest_rank_bytes or 0))
            else:
                total = f.io_time_s or 0.0
                diff = abs((f.slowest_rank_time_s or 0) - (f.fastest_rank_time_s or 0))
            if total and diff / total > th["imbalance_stragglers"]:
                bad.append((f, diff / total))
        if not bad:
            return []
        return [
            floor(
                Hit({"shared_files": len(bad), "worst_imbalance": max(v for _, v in bad)}, _top(bad)),
                _requests(f for f, _ in bad),
                th,
            )
        ]

    return test


def _per_process_groups(p: Profile) -> dict[str, list[FileFacts]]:
    """Files of one name (numbers normalized), each written by one rank, of at least two distinct ranks: the
    files of a file-per-process pattern (numbered files of one process are not)."""
    groups: dict[str, list[FileFacts]] = {}
    for f in p.files:
        if not f.shared and f.rank_ids and len(f.rank_ids) == 1 and f.identity and "#" in f.identity:
            groups.setdefault(f.identity, []).append(f)
    return {k: g for k, g in groups.items() if len({f.rank_ids[0] for f in g}) >= 2}


def _fpp_imbalance(p: Profile, th: dict) -> list[Hit]:
    groups: dict[str, list[tuple[int, int]]] = {}
    members: dict[str, list[FileFacts]] = {}
    for f in p.files:  # files whose ranks have records of their own
        if f.per_rank_bytes_written:
            members[f.path] = [f]
            for r in f.per_rank_bytes_written:
                groups.setdefault(f.path, []).append(
                    (f.per_rank_bytes_written[r], (f.per_rank_bytes_read or {}).get(r, 0))
                )
    for ident, files in _per_process_groups(p).items():
        groups[ident] = [(f.write.bytes, f.read.bytes) for f in files]
        members[ident] = files
    bad = []
    for name, vals in groups.items():
        if len(vals) < 2:
            continue
        for i, what in ((0, "write"), (1, "read")):
            xs = [v[i] for v in vals]
            if max(xs) and (max(xs) - min(xs)) / max(xs) > th["imbalance_size"]:
                bad.append((name, what, (max(xs) - min(xs)) / max(xs), len(xs)))
    if not bad:
        return []
    return [
        floor(
            Hit(
                {
                    "groups": len(bad),
                    "worst_imbalance": max(b[2] for b in bad),
                    "detail": [
                        {"files": b[0], "direction": b[1], "imbalance": b[2], "members": b[3]} for b in bad[:10]
                    ],
                },
                [b[0] for b in bad[:10]],
            ),
            _requests({id(f): f for b in bad for f in members[b[0]]}.values()),
            th,
        )
    ]


def _fpp_stragglers(p: Profile, th: dict) -> list[Hit]:
    groups = {k: [f for f in g if f.io_time_s] for k, g in _per_process_groups(p).items()}
    if not any(len(g) >= 4 for g in groups.values()):
        if not any(f.io_time_s is not None for f in p.files):
            raise NotEvaluated("no per-file I/O times")
        return []
    hits = []
    for ident, files in groups.items():
        if len(files) < 4:
            continue
        times = sorted(f.io_time_s for f in files)
        median = times[len(times) // 2]
        slow = [f for f in files if f.io_time_s > th["straggler_factor"] * median]
        if not slow:
            continue
        ev = {"group": ident, "files": len(files), "stragglers": len(slow), "median_s": median, "worst_s": times[-1]}
        msg = (
            f"{len(slow)} of {len(files)} files {ident} take more than {th['straggler_factor']:g}x the median "
            f"I/O time ({median:.1f} s; worst {times[-1]:.1f} s)"
        )
        osts = [o for f in slow for o in (f.lustre or {}).get("osts", [])]
        if osts:  # do the stragglers share a Lustre storage target?
            common = max(set(osts), key=osts.count)
            on_it = sum(1 for f in slow if common in (f.lustre or {}).get("osts", []))
            others = sum(1 for f in files if f not in slow and common in (f.lustre or {}).get("osts", []))
            ev.update({"common_ost": common, "stragglers_on_it": on_it, "others_on_it": others})
            if on_it >= 0.8 * len(slow):
                msg += f"; {on_it} of them are on OST {common} (and {others} of the other files): a slow OST"
        hits.append(Hit(ev, [f.path for f in sorted(slow, key=lambda f: -f.io_time_s)][:10], message=msg))
    return hits


PNETCDF_COLLECTIVE = (
    "make PnetCDF's calls collective: the _all calls, or post them (ncmpi_iput_*, ncmpi_iget_*) "
    "and complete them together with ncmpi_wait_all, which PnetCDF turns into one collective "
    "MPI-IO call"
)


def _collective(direction: str):
    def test(p: Profile, th: dict) -> list[Hit]:
        files = [
            f for f in p.files if (f.collective_writes if direction == "write" else f.collective_reads) is not None
        ]
        if not files:
            raise NotEvaluated(
                "no collective / independent split of the MPI-IO calls (Darshan's MPI-IO and "
                "PNETCDF modules have it; a run report only when hdf5.transfer_mode was set)"
            )
        coll = sum((f.collective_writes if direction == "write" else f.collective_reads) or 0 for f in files)
        indep = [
            (f, (f.independent_writes if direction == "write" else f.independent_reads) or 0) for f in files if f.shared
        ]
        n = sum(v for _, v in indep)
        if coll == 0 and n > th["independent_count"]:
            knobs, glob = _collective_fix([f for f, v in indep if v], direction)
            pnetcdf = all(f.pnetcdf for f, v in indep if v)  # counted at PnetCDF's level: its calls decide
            return [
                Hit(
                    {"independent_calls": n, "collective_calls": 0, "shared_files": sum(1 for _, v in indep if v)},
                    _top(indep),
                    knobs,
                    glob,
                    recommendation=PNETCDF_COLLECTIVE if pnetcdf else None,
                )
            ]
        return []

    return test


def _collective_ok(p: Profile, th: dict) -> list[Hit]:
    hits = []
    for direction in ("write", "read"):
        files = [f for f in p.files if (f.collective_writes if direction == "write" else f.collective_reads)]
        if files:
            coll = sum(f.collective_writes if direction == "write" else f.collective_reads for f in files)
            total = coll + sum(
                (f.independent_writes if direction == "write" else f.independent_reads) or 0 for f in files
            )
            hits.append(
                Hit(
                    {"direction": direction, "collective_calls": coll, "fraction": coll / total},
                    [f.path for f in files][:10],
                    message=f"{direction}s use collective MPI-IO: {coll:,} calls ({_pct(coll / total)})",
                )
            )
    return hits


def _blocking(p: Profile, th: dict) -> list[Hit]:
    files = [f for f in p.files if f.nonblocking_writes is not None]
    if not files:
        raise NotEvaluated("no non-blocking call counts (Darshan's MPI-IO and PNETCDF modules have them)")
    hits = []
    for direction in ("write", "read"):
        nb = sum((f.nonblocking_writes if direction == "write" else f.nonblocking_reads) or 0 for f in files)
        ops = sum((f.write if direction == "write" else f.read).ops for f in files)
        if ops and nb == 0:
            level = "PnetCDF" if all(f.pnetcdf for f in files) else "MPI-IO"
            hits.append(
                Hit(
                    {"direction": direction, "blocking_calls": ops},
                    [f.path for f in files][:10],
                    message=f"every {level} {direction} ({ops:,}) is blocking",
                )
            )
    return hits


def _aggregators(p: Profile, th: dict) -> list[Hit]:
    hints = p.job.mpi_hints
    if not hints:
        raise NotEvaluated(
            "no effective MPI-IO hints (Darshan does not record the application's hints; a run report does)"
        )
    if not p.job.nodes:
        raise NotEvaluated("the node count is unknown")
    listed = (hints.get("romio_aggregator_list") or "").split()
    agg = len(listed) if listed else int(hints["cb_nodes"]) if str(hints.get("cb_nodes", "")).isdigit() else None
    if agg is None:
        raise NotEvaluated("the hints name no aggregators (romio_aggregator_list, cb_nodes)")
    nodes, ranks = p.job.nodes, p.job.processes
    ev = {
        "aggregators": agg,
        "nodes": nodes,
        "ranks": ranks,
        "cb_config_list": hints.get("cb_config_list"),
        "cb_nodes": hints.get("cb_nodes"),
    }
    if agg < nodes:
        return [
            Hit(
                ev,
                knobs={"mpiio.cb_config_list": "*:1", "mpiio.cb_nodes": nodes},
                message=f"{agg} collective-buffering aggregator(s) for {nodes} nodes: collective I/O funnels "
                f"through fewer nodes than the job has",
            )
        ]
    if agg == nodes:
        return [Hit(ev, level="ok", message=f"one aggregator per node ({agg} for {nodes} node(s), {ranks} ranks)")]
    return [Hit(ev, level="ok", message=f"{agg} aggregators on {nodes} node(s) ({ranks} ranks)")]


def _not_in_effect(p: Profile, th: dict) -> list[Hit]:
    if p.job.source != "run-report":
        raise NotEvaluated("only a run report says what took effect")
    rows = {}
    for f in p.files:
        for s in f.settings or []:
            if s.get("status") in ("dropped", "failed", "changed", "not_applicable"):
                key = (s.get("layer"), s.get("knob"), s.get("status"), s.get("reason"))
                rows.setdefault(key, []).append(f.path)
    if not rows:
        return []
    detail = [{"knob": f"{k[0]}.{k[1]}", "status": k[2], "reason": k[3], "files": len(v)} for k, v in rows.items()]
    return [
        Hit(
            {"settings": detail},
            sorted({p for v in rows.values() for p in v})[:10],
            message="; ".join(
                f"{d['knob']} {d['status'].replace('_', ' ')}" + (f" ({d['reason']})" if d["reason"] else "")
                for d in detail
            ),
        )
    ]


def _partial(p: Profile, th: dict) -> list[Hit]:
    if p.job.source != "darshan":
        raise NotEvaluated("only Darshan logs can be partial")
    partial = [n.removeprefix("partial: ") for n in p.job.notes if n.startswith("partial: ")]
    return [Hit({"modules": partial[0]})] if partial else []


def _incomplete_report(p: Profile, th: dict) -> list[Hit]:
    if p.job.source != "run-report":
        raise NotEvaluated("only run reports say they are incomplete")
    why = [n.removeprefix("incomplete: ") for n in p.job.notes if n.startswith("incomplete: ")]
    return [Hit({"why": why[0]})] if why else []


# What recommending collective aggregation (ROMIO's two-phase I/O merging the ranks' requests) rules out: no
# collective buffering (SmartIO rule 7 disables it for sequential shared files) and independent transfers
# (rule 1).
AGGREGATED_WRITES = (("mpiio.romio_cb_write", "disable"), ("hdf5.transfer_mode", "independent"))
AGGREGATED_READS = (("mpiio.romio_cb_read", "disable"), ("hdf5.transfer_mode", "independent"))

CHECKS: tuple[Check, ...] = (
    Check(
        "stdio-heavy",
        "high",
        "STDIO carries much of the data",
        "Drishti S01",
        ("stdio_fraction",),
        (),
        "STDIO (fopen/fwrite) carries {fraction:.1%} of the data ({stdio_bytes:,} bytes)",
        "move bulk data to MPI-IO or HDF5",
        "replace fwrite/fread of bulk data with MPI-IO or parallel HDF5",
        _stdio,
    ),
    Check(
        "no-mpiio",
        "warn",
        "parallel job without MPI-IO",
        "Drishti M01",
        (),
        (),
        "{processes} processes moved {posix_bytes:,} bytes through POSIX only",
        "use MPI-IO (or HDF5 on MPI-IO) for shared data so that collective I/O can aggregate it",
        "switch the data path to MPI-IO or parallel HDF5",
        _no_mpiio,
    ),
    Check(
        "small-writes",
        "high",
        "many small writes",
        "Drishti P06, P16 (shared files)",
        ("small_bytes", "small_fraction", "small_count"),
        ("hdf5.transfer_mode",),
        "{small_requests:,} of {requests:,} POSIX writes ({fraction:.1%}) are below {small_bytes:,} bytes "
        "({to_shared_files:,} to shared files)",
        "aggregate writes: collective transfers let ROMIO merge them into large requests",
        "buffer writes into larger, contiguous ones, or make them collective (MPI_File_write_all)",
        _small("write"),
        keeps=AGGREGATED_WRITES,
    ),
    Check(
        "small-reads",
        "high",
        "many small reads",
        "Drishti P05, P15 (shared files)",
        ("small_bytes", "small_fraction", "small_count"),
        ("hdf5.transfer_mode",),
        "{small_requests:,} of {requests:,} POSIX reads ({fraction:.1%}) are below {small_bytes:,} bytes "
        "({to_shared_files:,} from shared files)",
        "aggregate reads: collective transfers let ROMIO merge them into large requests",
        "read in larger, contiguous pieces, or collectively (MPI_File_read_all)",
        _small("read"),
        keeps=AGGREGATED_READS,
    ),
    Check(
        "misaligned-file",
        "high",
        "requests not aligned to the file system",
        "Drishti P08",
        ("misaligned_fraction",),
        ("hdf5.alignment", "pnetcdf.nc_var_align_size"),
        "{misaligned_requests:,} of {requests:,} requests ({fraction:.1%}) are not aligned to the file "
        "system block ({file_alignment:,} bytes)",
        "align requests to the block or stripe size (by file format: HDF5 objects with hdf5.alignment, "
        "netCDF with its alignment hints)",
        "issue requests at multiples of the stripe size",
        _misaligned_file,
    ),
    Check(
        "misaligned-memory",
        "warn",
        "buffers not aligned in memory",
        "Drishti P07",
        ("misaligned_fraction",),
        (),
        "{misaligned_buffers:,} of {requests:,} requests ({fraction:.1%}) use buffers not aligned in memory",
        "allocate I/O buffers aligned (posix_memalign)",
        "allocate I/O buffers with posix_memalign",
        _misaligned_memory,
    ),
    Check(
        "random-writes",
        "high",
        "many random writes",
        "Drishti P13",
        ("random_fraction", "random_count"),
        (),
        "{random_requests:,} of {requests:,} writes ({fraction:.1%}) do not move forward in the file",
        "collective transfers let ROMIO sort requests; on a shared file see SmartIO rule 2",
        "write in file order, or collectively",
        _random("write"),
        keeps=AGGREGATED_WRITES,
    ),
    Check(
        "random-reads",
        "high",
        "many random reads",
        "Drishti P11",
        ("random_fraction", "random_count"),
        (),
        "{random_requests:,} of {requests:,} reads ({fraction:.1%}) do not move forward in the file",
        "collective transfers let ROMIO sort requests; on a shared file see SmartIO rule 2",
        "read in file order, or collectively; prefetch",
        _random("read"),
        keeps=AGGREGATED_READS,
    ),
    Check(
        "sequential-access",
        "ok",
        "access is mostly sequential",
        "Drishti P12, P14",
        ("random_fraction",),
        (),
        "",
        "",
        None,
        _sequential,
    ),
    Check(
        "redundant-writes",
        "warn",
        "data written more than once",
        "Drishti P10",
        ("redundant_ratio",),
        (),
        "{files} file(s) got more bytes written than their highest offset ({extra_bytes:,} extra bytes, up "
        "to {worst_ratio:.2f}x)",
        "look for rewrites: data sieving, HDF5 metadata flushes, checkpoints to one name",
        "write each byte once",
        _redundant("write"),
    ),
    Check(
        "redundant-reads",
        "warn",
        "data read more than once",
        "Drishti P09",
        ("redundant_ratio",),
        (),
        "{files} file(s) had more bytes read than their highest offset ({extra_bytes:,} extra bytes, up to "
        "{worst_ratio:.2f}x)",
        "cache what is read again; data sieving reads whole buffers",
        "read each byte once, or cache it",
        _redundant("read"),
    ),
    Check(
        "write-amplification",
        "high",
        "the file system wrote much more than the application",
        "iotuner run report (write_amplification, docs/report.md); Drishti P10 is the Darshan analogue",
        ("write_amplification",),
        ("mpiio.romio_cb_write", "mpiio.romio_ds_write", "hdf5.transfer_mode"),
        "",
        "let ROMIO decide collective buffering (automatic) and, when the holes outweigh the data, transfer "
        "independently; or disable data sieving for noncontiguous independent writes",
        None,
        _write_amplification,
    ),
    Check(
        "metadata-time",
        "high",
        "ranks spend long in metadata",
        "Drishti P17",
        ("metadata_time_s",),
        ("hdf5.coll_metadata_reads", "hdf5.coll_metadata_writes"),
        "{ranks} rank(s) spend more than {threshold_s:.0f} s in POSIX metadata calls (worst {worst_s:.1f} s)",
        "collective HDF5 metadata (one rank reads and broadcasts)",
        "open fewer files, cache stat results, combine files",
        _metadata,
    ),
    Check(
        "shared-imbalance-bytes",
        "high",
        "stragglers: ranks move unequal bytes to a shared file",
        "Drishti P18",
        ("imbalance_stragglers",),
        (),
        "{shared_files} shared file(s) with unequal bytes per rank (worst {worst_imbalance:.1%})",
        "spread the data evenly over the ranks",
        "balance the decomposition",
        _shared_imbalance("bytes"),
    ),
    Check(
        "shared-imbalance-time",
        "high",
        "stragglers: ranks take unequal time on a shared file",
        "Drishti P19",
        ("imbalance_stragglers",),
        (),
        "{shared_files} shared file(s) where the slowest rank takes much longer than the fastest (worst "
        "{worst_imbalance:.1%} of the I/O time)",
        "stripe the file wider (Lustre) so that ranks meet fewer shared servers; SmartIO rule 10",
        None,
        _shared_imbalance("time"),
    ),
    Check(
        "rank-imbalance",
        "high",
        "per-rank files or records of unequal size",
        "Drishti P21, P22",
        ("imbalance_size",),
        (),
        "{groups} group(s) of files whose ranks move unequal bytes (worst {worst_imbalance:.1%})",
        "balance the data over the ranks",
        "balance the decomposition",
        _fpp_imbalance,
    ),
    Check(
        "fpp-stragglers",
        "high",
        "stragglers among per-process files",
        "iotuner; Drishti P19 is the shared-file analogue",
        ("straggler_factor",),
        (),
        "",
        "if the stragglers share a storage target, report it to the facility (a slow OST); otherwise balance "
        "the ranks' work",
        None,
        _fpp_stragglers,
    ),
    Check(
        "no-collective-writes",
        "high",
        "no collective writes on shared files",
        "Drishti M03",
        ("independent_count",),
        ("hdf5.transfer_mode",),
        "{independent_calls:,} independent MPI-IO writes to {shared_files} shared file(s) and no collective one",
        "make the transfers collective (hdf5.transfer_mode collective: only when every rank makes the same "
        "number of calls)",
        "use MPI_File_write_all / H5FD_MPIO_COLLECTIVE / PnetCDF's _all calls",
        _collective("write"),
        keeps=AGGREGATED_WRITES,
    ),
    Check(
        "no-collective-reads",
        "high",
        "no collective reads on shared files",
        "Drishti M02",
        ("independent_count",),
        ("hdf5.transfer_mode",),
        "{independent_calls:,} independent MPI-IO reads from {shared_files} shared file(s) and no collective one",
        "make the transfers collective (hdf5.transfer_mode collective: only when every rank makes the same "
        "number of calls)",
        "use MPI_File_read_all / H5FD_MPIO_COLLECTIVE / PnetCDF's _all calls",
        _collective("read"),
        keeps=AGGREGATED_READS,
    ),
    Check("collective-used", "ok", "collective MPI-IO", "Drishti M04, M05", (), (), "", "", None, _collective_ok),
    Check(
        "blocking-io",
        "info",
        "all MPI-IO calls block",
        "Drishti M06, M07",
        (),
        (),
        "",
        "overlap I/O with computation",
        "non-blocking MPI-IO (MPI_File_iwrite_all), HDF5's async VOL, or PnetCDF's ncmpi_iput_* with ncmpi_wait_all",
        _blocking,
    ),
    Check(
        "aggregators-nodes",
        "high",
        "collective-buffering aggregators versus nodes",
        "Drishti M08, M09, M10",
        (),
        ("mpiio.cb_config_list", "mpiio.cb_nodes"),
        "",
        "one aggregator per node at least: cb_config_list '*:1' and cb_nodes = nodes",
        None,
        _aggregators,
    ),
    Check(
        "settings-not-in-effect",
        "warn",
        "requested settings not in effect",
        "iotuner run report (settings verification, docs/report.md)",
        (),
        (),
        "",
        "see each reason; a setting not in effect costs nothing but misleads",
        None,
        _not_in_effect,
    ),
    Check(
        "partial-log",
        "warn",
        "the Darshan log is incomplete",
        "Darshan (partial flag)",
        (),
        (),
        "Darshan ran out of record memory in: {modules}; some files are missing",
        "rerun with a larger DARSHAN_MODMEM",
        None,
        _partial,
    ),
    Check(
        "incomplete-report",
        "warn",
        "the run report holds a part of the job",
        "iotuner run report (incomplete, docs/report.md)",
        (),
        (),
        "{why}",
        "the findings and predictions cover only what the report holds",
        None,
        _incomplete_report,
    ),
)
