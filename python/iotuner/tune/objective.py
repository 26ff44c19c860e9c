"""What a trial is judged by. Bandwidths are in MiB/s (2^20 bytes/s) everywhere in iotuner: run reports,
tables, tuning, summary.json and plots, as IOR and Darshan print them, so numbers compare with those tools
as they are (the TunIO and H5Tuner papers use MB/s, 10^6 bytes/s: 4.9% less). A study made before this
change keeps its MB/s (its unit is stored with it)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..run_report import Report

MIB_TO_MB = 1.048576


class ObjectiveError(ValueError):
    """The run did not yield this objective (no report, no I/O, no match)."""


CLOCKS = ("phase", "calls")


@dataclass(frozen=True)
class Objective:
    name: str
    direction: str  # "maximize" or "minimize"
    unit: str
    pattern: str | None = None  # for objectives read from the application's output
    # what time a bandwidth or io-time divides by: "phase", each file's phase from open to close (what the
    # application waited, its work between the calls included), or "calls", the time inside the
    # application's I/O calls (Report.in_calls): a kernel's phases and its application's then compare
    clock: str = "phase"

    def value(self, report: Report | None, stdout: str | None) -> float:
        if self.pattern is not None:
            return _from_output(self.pattern, stdout or "")
        if report is None:
            raise ObjectiveError("no run report")
        return self.of_totals(report.in_calls() if self.clock == "calls" else report.totals)

    def of_totals(self, t: Mapping[str, float]) -> float:
        """The objective of a run's totals: a report's, or predicted ones (bytes, times and bandwidths as a
        report's `totals` names them). A regex objective is read from the output: no totals give it."""
        if self.pattern is not None:
            raise ObjectiveError(f"objective {self.name} is read from the application's output, not from totals")
        written, read = t["bytes_written"], t["bytes_read"]
        if written + read == 0:
            raise ObjectiveError("the run moved no bytes")
        scale = MIB_TO_MB if self.unit == "MB/s" else 1.0  # MB/s: a study made before the units were one
        bw_w = t["write_bandwidth_mib_s"] * scale
        bw_r = t["read_bandwidth_mib_s"] * scale
        if self.name == "perf":
            alpha = written / (written + read)  # TunIO: the written share of the bytes
            return (1 - alpha) * bw_r + alpha * bw_w
        if self.name == "write-bw":
            if not written:
                raise ObjectiveError("the run wrote nothing")
            return bw_w
        if self.name == "read-bw":
            if not read:
                raise ObjectiveError("the run read nothing")
            return bw_r
        if self.name == "io-time":
            return t["write_time_s"] + t["read_time_s"]
        raise ObjectiveError(f"unknown objective {self.name}")

    def clock_time(self, report: Report | None) -> float | None:
        """The seconds of a run that this objective's value is measured on: its clock's write and read time
        (write-bw: the write time, read-bw: the read time). A speedup on the objective is a speedup of these
        seconds, so the time the tuned settings save per run is measured here (viability). None: an objective
        read from the output, whose clock iotuner does not know, or no report."""
        if self.pattern is not None or report is None:
            return None
        t = report.in_calls() if self.clock == "calls" else report.totals
        write, read = float(t.get("write_time_s") or 0.0), float(t.get("read_time_s") or 0.0)
        return write if self.name == "write-bw" else read if self.name == "read-bw" else write + read

    def clock_name(self) -> str:
        """What `clock_time` measures, to follow 'N% of the run in'."""
        if self.pattern is not None:
            return "the whole run (the objective is read from the output)"
        part = {"write-bw": "writing", "read-bw": "reading"}.get(self.name, "I/O")
        return f"{part} inside the I/O calls" if self.clock == "calls" else f"{part} from each file's open to its close"

    def key(self, value: float) -> float:
        """A sort key where higher is better, whatever the direction: max(xs, key=objective.key) is the best."""
        return value if self.direction == "maximize" else -value

    def better(self, a: float, b: float) -> bool:
        return self.key(a) > self.key(b)

    def improvement(self, value: float, reference: float) -> float:
        """How much better value is than reference, in the objective's unit (>0 is better)."""
        return self.key(value) - self.key(reference)

    def roti_unit(self) -> str:
        """The unit of RoTI = improvement / minutes of tuning."""
        if self.unit in ("MiB/s", "MB/s"):
            return f"{self.unit} per minute"
        if self.direction == "minimize":
            return f"{self.unit or 'units'} saved per run, per minute (objective {self.name}, lower is better)"
        return f"{self.unit or 'units of ' + self.name} per minute"

    def gain(self, value: float, reference: float) -> float:
        """How many times better value is than reference (>1 is better)."""
        if self.direction == "maximize":
            return value / reference if reference > 0 else float("inf")
        return reference / value if value > 0 else float("inf")


def of_spec(spec) -> Objective:
    """The objective a study stored (config.ObjectiveSpec)."""
    return Objective(spec.name, spec.direction, spec.unit, spec.pattern, getattr(spec, "clock", "phase"))


def _from_output(pattern: str, stdout: str) -> float:
    matches = re.findall(pattern, stdout, flags=re.MULTILINE)
    if not matches:
        raise ObjectiveError(f"the output has no match for /{pattern}/")
    last = matches[-1]
    text = last[0] if isinstance(last, tuple) else last
    try:
        return float(text)
    except ValueError:
        raise ObjectiveError(f"/{pattern}/ matched '{text}', not a number") from None


BUILTIN = {
    "perf": Objective("perf", "maximize", "MiB/s"),
    "write-bw": Objective("write-bw", "maximize", "MiB/s"),
    "read-bw": Objective("read-bw", "maximize", "MiB/s"),
    "io-time": Objective("io-time", "minimize", "s"),
}


def parse(spec: str, direction: str | None = None) -> Objective:
    """perf (TunIO's default), write-bw, read-bw, io-time, or regex:PATTERN (first group is the number)."""
    if spec.startswith("regex:"):
        pattern = spec[len("regex:") :]
        try:
            compiled = re.compile(pattern)
        except re.error as e:
            raise ObjectiveError(f"bad regular expression /{pattern}/: {e}") from None
        if compiled.groups < 1:
            raise ObjectiveError(f"/{pattern}/ needs a group around the number, e.g. 'bandwidth=([0-9.]+)'")
        return Objective("regex", _direction(direction or "max"), "", pattern)
    if spec not in BUILTIN:
        raise ObjectiveError(f"unknown objective '{spec}': use {', '.join(BUILTIN)} or regex:PATTERN")
    obj = BUILTIN[spec]
    if direction and _direction(direction) != obj.direction:
        raise ObjectiveError(f"objective {spec} is to {obj.direction}; --direction applies to regex objectives")
    return obj


def _direction(text: str) -> str:
    d = {"max": "maximize", "maximize": "maximize", "min": "minimize", "minimize": "minimize"}.get(text)
    if d is None:
        raise ObjectiveError(f"direction '{text}' is not max or min")
    return d
