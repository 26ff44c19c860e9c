"""An iotuner run report as a Profile: one file per phase, recurring phases
of one name kept apart (each is a file open to close).

A run report knows what Darshan does not: the effective MPI-IO hints (so the
aggregators), the settings requested and what took effect, the write
amplification, and in smart mode the insights the runtime extracted. It has
no size histogram, no offsets and no collective / independent split, so the
checks that need them say "not evaluated". Fields are read defensively: the
runtime's report may gain fields.
"""

from __future__ import annotations

from .. import native
from ..recommend import insights
from ..run_report import Report
from .profile import Direction, FileFacts, Job, Profile


def _num(d: dict | None, key: str, default=0):
    v = (d or {}).get(key)
    return v if isinstance(v, (int, float)) else default


def _direction(phase: dict, d: str) -> Direction:
    """The application's level (the phase's data_level): HDF5 dataset calls, PnetCDF puts and gets, MPI-IO, or
    POSIX."""
    word = "written" if d == "write" else "read"
    h5, mpi = phase.get("hdf5") or {}, phase.get("mpiio") or {}
    level = phase.get("data_level") or ("hdf5" if h5 else "mpiio" if mpi else "posix")
    src = phase.get(level) or phase.get("posix") or {}
    ops = _num(src, f"dataset_{'writes' if d == 'write' else 'reads'}" if level == "hdf5" else f"{d}_calls")
    nbytes = _num(phase, f"bytes_{word}")
    return Direction(
        ops=int(ops),
        bytes=int(nbytes),
        time_s=_num(src, f"{d}_time_s", None),
        median_size=int(nbytes / ops) if ops else None,
    )  # the mean: a report has no sizes


def _posix_direction(phase: dict, d: str) -> Direction | None:
    posix = phase.get("posix")
    if not posix:
        return None
    word = "written" if d == "write" else "read"
    ops = int(_num(posix, f"{d}_calls"))
    nbytes = int(_num(posix, f"bytes_{word}"))
    return Direction(
        ops=ops, bytes=nbytes, time_s=_num(posix, f"{d}_time_s", None), median_size=int(nbytes / ops) if ops else None
    )


def build(report: Report, path: str) -> Profile:
    run = report.run
    core = native.core()
    smart = {
        p.get("identity"): p.get("insights")
        for p in (report.data.get("smart") or {}).get("phases", [])
        if p.get("role") == "learn" and p.get("insights")
    }
    files = []
    for i, ph in enumerate(report.phases):
        fpath = ph.get("file", "?")
        ident = core.identity(fpath)
        f = FileFacts(path=fpath, identity=ident, ranks=int(ph.get("ranks") or 1))
        f.shared = f.ranks > 1
        kind = ph.get("kind")
        f.interfaces = {
            "hdf5": ["hdf5", "mpiio", "posix"] if ph.get("driver") == "mpio" else ["hdf5", "posix"],
            "pnetcdf": ["pnetcdf", "mpiio", "posix"],
            "mpiio": ["mpiio", "posix"],
            "posix": ["posix"],
        }.get(kind, [kind or "posix"])
        f.pnetcdf = kind == "pnetcdf"
        f.file_system = ph.get("file_system")
        f.write, f.read = _direction(ph, "write"), _direction(ph, "read")
        f.posix_write, f.posix_read = _posix_direction(ph, "write"), _posix_direction(ph, "read")
        stdio = ph.get("stdio") or {}
        f.stdio_bytes = int(_num(stdio, "bytes_written")) + int(_num(stdio, "bytes_read"))
        if f.stdio_bytes and kind == "posix" and f.posix_write and f.posix_read:
            # as Darshan's STDIO module: the streams' bytes apart, the file's write and read its POSIX calls'
            f.interfaces = ["posix", "stdio"] if f.posix_write.ops or f.posix_read.ops else ["stdio"]
            f.write, f.read = f.posix_write, f.posix_read
        posix = ph.get("posix") or {}
        f.meta_time_s = _num(posix, "meta_time_s", None)
        f.io_time_s = _num(ph, "io_time_sum_s", None)
        f.wall_time_s = _num(ph, "wall_time_s", None)
        f.bandwidth_mib_s = _num(ph, "bandwidth_mib_s", None)
        f.write_amplification = _num(ph, "write_amplification", None)
        f.mpi_hints = ph.get("mpi_hints")
        f.settings = ph.get("settings") or []
        f.smart_insights = smart.get(ident) or smart.get(fpath)
        for d in ("write", "read"):  # the collective / independent split, as the insights take it
            calls = insights.split(report, i, d)
            if calls is not None:
                setattr(f, f"collective_{d}s", calls[0])
                setattr(f, f"independent_{d}s", calls[1])
        for s in f.settings:  # the transfer mode HDF5 actually used, when it was a setting
            if s.get("layer") == "hdf5" and s.get("knob") == "transfer_mode" and s.get("effective"):
                eff = str(s["effective"])
                mode = (
                    "collective"
                    if eff.startswith("collective")
                    else "independent"
                    if eff.startswith("independent")
                    else None
                )
                if mode and f.write.ops:
                    f.collective_writes, f.independent_writes = (
                        (f.write.ops, 0) if mode == "collective" else (0, f.write.ops)
                    )
                if mode and f.read.ops:
                    f.collective_reads, f.independent_reads = (
                        (f.read.ops, 0) if mode == "collective" else (0, f.read.ops)
                    )
        files.append(f)
    hints = report.effective_hints()
    doc = report.settings.get("document") if report.settings.get("status") == "loaded" else None
    job = Job(
        source="run-report",
        input=path,
        processes=int(run.get("ranks") or 1),
        nodes=run.get("nodes"),
        nodes_from="the run report",
        runtime_s=run.get("wall_time_s"),
        executable=(run.get("command") or [""])[0],
        log_version=str(report.data.get("version")),
        mpi_hints=hints or None,
        settings_document=doc,
    )
    if report.incomplete:
        job.notes.append(f"incomplete: {report.incomplete}")
    if report.settings.get("status") == "rejected":
        job.notes.append(f"the run's settings were rejected: {report.settings.get('message')}")
    return Profile(job=job, files=files, report=report)
