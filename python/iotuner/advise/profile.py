"""What the checks read: a job and its files, from a Darshan log or a run report.

Both sources fill the same fields; a field a source cannot give stays None,
and a check that needs it says "not evaluated" instead of guessing.
Counts and bytes are summed over the ranks that touched a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Direction:
    """One direction (write or read) of one file at one interface."""

    ops: int = 0
    bytes: int = 0
    size_histogram: dict[float, int] | None = None  # ops by size bin, keyed by the bin's upper bound (exclusive)
    consecutive_ops: int | None = None  # started where the previous one ended
    sequential_ops: int | None = None  # started at or after the previous one's end (includes consecutive)
    max_offset: int | None = None  # highest byte touched + 1
    time_s: float | None = None  # summed over ranks
    locality: str | None = None  # smart mode's class from a trace: sequential, strided, random
    median_size: int | None = None  # largest per-rank median, from a trace
    common_size: int | None = None  # the most frequent access size (Darshan ACCESS1)
    per_rank_ops: dict[int, int] | None = None

    def ops_below(self, size: int) -> int | None:
        """Ops in the size bins that lie wholly below `size` (None without a histogram)."""
        if self.size_histogram is None:
            return None
        return sum(n for upper, n in self.size_histogram.items() if upper <= size)


@dataclass
class FileFacts:
    path: str
    identity: str = ""
    ranks: int = 1  # processes that accessed it
    rank_ids: list[int] | None = None  # which ones, when known
    shared: bool | None = None  # one path opened by several processes
    interfaces: list[str] = field(default_factory=list)  # pnetcdf, hdf5, mpiio, posix, stdio
    pnetcdf: bool = False  # Darshan's PnetCDF module has records of it
    file_system: str | None = None
    write: Direction = field(default_factory=Direction)  # at the highest interface the file used
    read: Direction = field(default_factory=Direction)
    posix_write: Direction | None = None
    posix_read: Direction | None = None
    stdio_bytes: int = 0
    collective_writes: int | None = None
    independent_writes: int | None = None
    collective_reads: int | None = None
    independent_reads: int | None = None
    nonblocking_writes: int | None = None
    nonblocking_reads: int | None = None
    file_not_aligned: int | None = None
    mem_not_aligned: int | None = None
    file_alignment: int | None = None
    meta_time_s: float | None = None  # POSIX open/stat/seek/... time, summed over ranks
    rank_meta_time_s: dict[int, float] | None = None
    slowest_rank_time_s: float | None = None
    fastest_rank_time_s: float | None = None
    slowest_rank_bytes: int | None = None
    fastest_rank_bytes: int | None = None
    io_time_s: float | None = None  # read + write + metadata time, summed over ranks
    per_rank_bytes_written: dict[int, int] | None = None
    per_rank_bytes_read: dict[int, int] | None = None
    lustre: dict[str, Any] | None = None  # stripe_count, stripe_size, components, pfl
    # run reports only
    wall_time_s: float | None = None
    bandwidth_mib_s: float | None = None
    write_amplification: float | None = None
    mpi_hints: dict[str, str] | None = None
    settings: list[dict] | None = None  # requested / effective / status / reason
    smart_insights: dict | None = None  # insights recorded by smart mode for this file's identity

    def bytes_moved(self) -> int:
        return self.write.bytes + self.read.bytes + self.stdio_bytes

    def name(self) -> str:
        return self.path


@dataclass
class Job:
    source: str  # "darshan" or "run-report"
    input: str
    processes: int = 1
    nodes: int | None = None
    nodes_from: str | None = None  # how the node count is known
    runtime_s: float | None = None
    executable: str = ""
    jobid: str | None = None
    log_version: str | None = None
    modules: dict[str, dict] = field(default_factory=dict)
    mpi_hints: dict[str, str] | None = None  # effective hints (run reports)
    settings_document: dict | None = None  # the settings the run used (run reports)
    has_dxt: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass
class Profile:
    job: Job
    files: list[FileFacts]
    report: Any = None  # the run report (iotuner.report.Report) it came from: what the insights are extracted from

    def data_files(self) -> list[FileFacts]:
        return [f for f in self.files if f.bytes_moved() > 0]
