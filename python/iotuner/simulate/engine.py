"""Runs the simulator (iotuner-iosim, on SimGrid) on a workload under settings documents, and reads its answer."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field

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
    aggregators: int               # 0: no collective calls
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
        raise SimulateError("the simulator (iotuner-iosim) is not built: it needs SimGrid's simgrid.pc and a C++ "
                            "compiler when iotuner is built (apt-get install libsimgrid-dev g++, or spack install "
                            "simgrid; then rebuild iotuner, e.g. make setup)") from None


# what a crash prints after its message: SimGrid's and glibc's backtraces
BACKTRACE = re.compile(r"^\s*(Backtrace|->|#\d|\d+# |\[0x|0x[0-9a-f]+|at |Aborted|\*\*\* )|^\S+\(\+0x[0-9a-f]+\)")


def engine_message(stderr: str) -> str:
    """The simulator's own words on one line: every line of its stderr but the backtrace (SimGrid's
    xbt_die prints the cause first, then the stack), so the cause is never cut off."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not BACKTRACE.match(line)]
    return " / ".join(lines)[-2000:] if lines else "no message"


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


def simulate(workload: Workload, platform: Platform, nodes: int, flat: dict, name: str = "",
             as_run: bool = False, timeout: float = 600) -> Result:
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
            results[i] = PhaseResult(ph.label, got["time_s"], ph.pattern.bytes,
                                     got["collective_s"], got["targets_used"], ph.measured_s)
    # aggregators: none where every phase is independent calls
    aggregators = setup.hints.write_aggregators if any(p.collective_under(flat) for p in workload.phases) else 0
    return Result(name, [results[i] for i in range(len(workload.phases))], setup.stripe_count, setup.stripe_size,
                  aggregators, setup.mpiio, activities, wall)
