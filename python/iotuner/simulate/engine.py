"""Runs the simulator (iotuner-iosim, on SimGrid) on a workload under settings documents, and reads its answer."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .. import native
from .platform import Platform
from .trace import engine_input
from .workload import Workload

MIB = 1 << 20


class SimulateError(RuntimeError):
    """The simulator is missing or failed."""


@dataclass
class PhaseResult:
    label: str
    seconds: float
    bytes: int
    collective_s: float
    targets_used: int
    measured_s: float | None = None


@dataclass
class Result:
    """One settings document's prediction for the whole workload."""

    name: str
    phases: list[PhaseResult]
    stripe_count: int
    stripe_size: int
    aggregators: int  # 0: no collective calls
    hints: dict = field(default_factory=dict)
    activities: int = 0
    wall_s: float = 0.0

    @property
    def seconds(self) -> float:
        return sum(p.seconds for p in self.phases)

    @property
    def bytes(self) -> int:
        return sum(p.bytes for p in self.phases)

    @property
    def bandwidth_mib_s(self) -> float:
        return self.bytes / MIB / self.seconds if self.seconds > 0 else 0.0


def executable() -> str:
    try:
        return str(native.executable("iotuner-iosim"))
    except native.NativeMissing:
        raise SimulateError(
            "the simulator (iotuner-iosim) is not built: it needs SimGrid's simgrid.pc and a C++ "
            "compiler when iotuner is built (apt-get install libsimgrid-dev g++, or spack install "
            "simgrid; then rebuild iotuner, e.g. make setup)"
        ) from None


# what a crash prints after its message: SimGrid's and glibc's backtraces
BACKTRACE = re.compile(r"^\s*(Backtrace|->|#\d|\d+# |\[0x|0x[0-9a-f]+|at |Aborted|\*\*\* )|^\S+\(\+0x[0-9a-f]+\)")


def engine_message(stderr: str) -> str:
    """The simulator's own words on one line: every line of its stderr but the backtrace (SimGrid's
    xbt_die prints the cause first, then the stack), so the cause is never cut off."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not BACKTRACE.match(line)]
    return " / ".join(lines)[-2000:] if lines else "no message"


# What one simulation costs, measured here (2026-11-27, a one-phase report on hopper at 1,000, 8,000 and 32,000
# ranks: 63, 167 and 459 MB at most, 7.4, 78 and 434 s): memory grows by about 13 KB a rank (16 KiB taken, for
# the traces in Python and the engine's actors), time as ranks^1.2; SimGrid maps about 2 regions per actor
# (its stack and guard), so vm.max_map_count bounds the ranks (100,000 aborted under 65,530).
BASE_BYTES = 64 << 20
BYTES_PER_RANK = 16 << 10
SECONDS_AT_1000_RANKS = 7.4
MAPS_PER_RANK = 2


def _available_bytes() -> int | None:
    """Memory this process may still take: MemAvailable, or a lower address-space limit."""
    import resource

    found = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        found = soft if found is None else min(found, soft)
    return found


def _max_maps() -> int | None:
    try:
        return int(Path("/proc/sys/vm/max_map_count").read_text())
    except (OSError, ValueError):
        return None


def estimate(ranks: int) -> tuple[int, float]:
    """(bytes, seconds) one engine run at `ranks` ranks is expected to take here."""
    return BASE_BYTES + BYTES_PER_RANK * ranks, SECONDS_AT_1000_RANKS * (ranks / 1000) ** 1.2


def refusal(ranks: int, timeout: float = 600) -> str | None:
    """Why this machine cannot simulate `ranks` ranks (with the estimate), or None; decided before any work."""
    need, seconds = estimate(ranks)
    what = f"{ranks:,} ranks need about {need / 2**30:.1f} GiB and {_duration(seconds)} per simulation here"
    have = _available_bytes()
    if have is not None and need > have * 0.8:
        return f"{what}; this machine has {have / 2**30:.1f} GiB available"
    maps = _max_maps()
    if maps is not None and ranks * MAPS_PER_RANK > maps:
        return (
            f"{what}, and SimGrid maps about {MAPS_PER_RANK} memory regions per rank: more than this "
            f"machine's vm.max_map_count ({maps:,}) allows; at most about {maps // MAPS_PER_RANK:,} ranks here"
        )
    if seconds > timeout:
        return f"{what}: more than the {_duration(timeout)} a simulation may take"
    return None


def _duration(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.0f} h"


def run_engine(text: str, timeout: float = 600) -> dict:
    try:
        proc = subprocess.run([executable(), "-"], input=text, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SimulateError(f"the simulation took more than {timeout:.0f} s; gave up") from None
    if proc.returncode != 0:
        raise SimulateError(f"the simulator failed (exit {proc.returncode}): {engine_message(proc.stderr)}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SimulateError("the simulator gave no result") from None


def simulate(
    workload: Workload,
    platform: Platform,
    nodes: int,
    flat: dict,
    name: str = "",
    as_run: bool = False,
    timeout: float = 600,
) -> Result:
    """The workload at its rank count on `nodes` nodes of the platform, under settings `flat`
    ({"layer.knob": value}; as_run: on top of what the measured run applied); timeout: seconds each engine
    run may take."""
    platform.check_nodes(nodes)
    # one engine run per kind of write (a new file writes at its own rate) and of file layout
    groups: dict[tuple[bool, bool], list[int]] = {}
    for i, ph in enumerate(workload.phases):
        groups.setdefault((ph.new_file, ph.per_process), []).append(i)
    results: dict[int, PhaseResult] = {}
    setup, activities, wall = None, 0, 0.0
    for indices in groups.values():
        phases = [workload.phases[i] for i in indices]
        text, s = engine_input(platform, workload.ranks, nodes, phases, flat, as_run)
        setup = setup or s
        out = run_engine(text, timeout)
        activities += out.get("activities", 0)
        wall += out.get("wall_s", 0.0)
        for i, ph, got in zip(indices, phases, out["phases"]):
            results[i] = PhaseResult(
                ph.label, got["time_s"], ph.pattern.bytes, got["collective_s"], got["targets_used"], ph.measured_s
            )
    # aggregators: none where every phase is independent calls
    aggregators = setup.hints.write_aggregators if any(p.collective_under(flat) for p in workload.phases) else 0
    return Result(
        name,
        [results[i] for i in range(len(workload.phases))],
        setup.stripe_count,
        setup.stripe_size,
        aggregators,
        setup.mpiio,
        activities,
        wall,
    )
