"""One evaluation: run the application once with a settings document and
measure the objective. Real jobs and the synthetic objective share this
interface, so the tuner treats them alike."""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from .. import settings
from ..run_report import Report
from ..settings import as_text
from .launch import Launcher
from .objective import Objective, ObjectiveError

STDERR_TAIL = 2000
# What the system said, deep in a failed job's stderr (an HDF5 error stack of dozens of lines, two ranks
# interleaved): the cause of the failure, named first in the run's error
SYSTEM_CAUSES = (
    "No space left on device",
    "Disk quota exceeded",
    "File too large",
    "Read-only file system",
    "Too many open files",
    "Input/output error",
    "Permission denied",
)


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def printable(text: str) -> str:
    """Captured output as stored text: NUL and the other control bytes (Open MPI 5's messages hold NULs, which
    would make trials.csv binary) dropped; newlines and tabs kept."""
    return CONTROL.sub("", text)


def scratch_full(scratch: Path) -> bool:
    """Is the file system of the scratch directory full (less than 1 MiB or 0.1% left)?"""
    try:
        st = os.statvfs(scratch)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < max(1 << 20, st.f_blocks * st.f_frsize // 1000)


def failure_cause(stderr: str, scratch: Path, full: bool) -> str | None:
    """The system's reason for a failed run: from its stderr, or a full scratch file system (a rank killed
    by another's abort may not have printed it)."""
    cause = next((c for c in SYSTEM_CAUSES if c in stderr), None)
    if full:
        return f"{cause or 'No space left on device'} (the scratch file system of {scratch} is full)"
    return cause


RUN_DIR = re.compile(
    r"baseline-\d{3}|training-\d{3}|t(?P<trial>\d{4})-r\d+"
    r"|confirm-\d+-(default|t\d{4}|training-\d{3})"
)  # run labels


@dataclass
class Measurement:
    ok: bool
    value: float | None
    duration_s: float
    error: str | None = None  # why it failed, with the tail of stderr
    # requested knobs in effect, as read back: {"layer.knob": [effective value per phase]}; knobs
    # dropped or not applicable are absent. None: nothing was read back (the requested settings stand in)
    effective: dict[str, list[str]] | None = None
    observed: dict[str, str] = field(default_factory=dict)  # every value in effect, requested or not (hints)
    details: dict[str, Any] = field(default_factory=dict)
    report: dict | None = None  # the run report, whole: what strategies observe
    fault: str | None = None  # the tuner itself could not run it (its scratch or output is unwritable or full)
    retry: bool = False  # the scheduler ended it (time limit, node failure, cancelled): worth one more try


class Evaluator(Protocol):
    objective: Objective

    def evaluate(self, doc: dict, label: str) -> Measurement:
        """Runs once with the settings document; label names the run (scratch directory, logs)."""


class OfflineEvaluator:
    """Answers a run without a job: a model (synthetic) or a recorded sweep (replay). A run's draw
    depends only on the seed and its label, so a resumed study, or another worker, draws the same."""

    objective: Objective
    seed: int = 0
    now: Callable[[], float] = staticmethod(time.monotonic)  # tests give a deterministic clock

    def evaluate(self, doc: dict, label: str) -> Measurement:
        start = self.now()
        m = self.answer(settings.flatten(doc), random.Random(f"{self.seed}:{label}"))
        m.duration_s = self.now() - start
        return m

    def answer(self, flat: Mapping[str, Any], rng: random.Random) -> Measurement:
        """One noisy run of these settings; duration_s is filled in by evaluate."""
        raise NotImplementedError

    def value(self, flat: Mapping[str, Any]) -> float | None:
        """The noise-free value of these settings (benchmarks judge strategies by it)."""
        raise NotImplementedError


def read_back(report: Report) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(effective, observed) of a run report: the requested knobs applied or changed, with their
    effective values; and the MPI-IO hints in effect, requested or not (the same in every phase)."""
    eff: dict[str, set[str]] = {}
    for c in report.checks():
        if c["status"] in ("applied", "changed"):
            key = f"{c['layer']}.{c['knob']}" + (f"[{c['dataset']}]" if c.get("dataset") else "")
            eff.setdefault(key, set()).add(str(c["effective"]))
    hints: dict[str, set[str]] = {}
    for phase in report.phases:
        for name, value in phase.get("mpi_hints", {}).items():
            hints.setdefault(f"mpiio.{name}", set()).add(str(value))
        for key, value in phase.get("application_settings", {}).items():  # report 2: the application's own
            if key.startswith("hdf5.") and key not in eff:
                hints.setdefault(key, set()).add(str(value))
    return (
        {k: sorted(v) for k, v in sorted(eff.items())},
        {k: next(iter(v)) for k, v in sorted(hints.items()) if len(v) == 1},
    )


def reference_of(m: Measurement) -> dict[str, str]:
    """The default's effective values, from a run of the default settings."""
    ref = dict(m.observed)
    for k, values in (m.effective or {}).items():
        if len(values) == 1:
            ref[k] = values[0]
        else:
            ref.pop(k, None)
    return ref


def requested(doc: dict) -> dict[str, list[str]]:
    """Stand-in for what took effect when nothing was read back: what was requested."""
    return {k: [as_text(v)] for k, v in sorted(settings.flatten(doc).items())}


class JobEvaluator:
    """Runs the real application through a launcher, in a scratch directory per run."""

    def __init__(
        self,
        app: Sequence[str],
        launcher: Launcher,
        objective: Objective,
        scratch: Path,
        timeout: float | None = None,
        keep: bool = False,
        drop_caches: bool = False,
    ):
        self.app, self.launcher, self.objective = list(app), launcher, objective
        self.scratch, self.timeout, self.keep, self.drop_caches = Path(scratch), timeout, keep, drop_caches
        self.notes: list[str] = []

    def evaluate(self, doc: dict, label: str) -> Measurement:
        workdir = self.scratch / label
        try:
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir(parents=True)
            cfg = settings.save(doc, workdir / "settings.json")
        except OSError as e:  # the scratch is full or unwritable: no run can start, whatever the settings
            shutil.rmtree(workdir, ignore_errors=True)
            why = f"cannot prepare the run in the scratch directory {self.scratch}: {e.strerror or e}"
            return Measurement(False, None, 0.0, why, fault=why)
        app = [a.replace("{scratch}", str(workdir)) for a in self.app]
        if self.drop_caches:
            self._drop_caches()
        start = time.monotonic()
        full = False
        try:
            result = self.launcher.run(
                app, config=cfg, report=workdir / "report.json", cwd=workdir, timeout=self.timeout
            )
        finally:
            full = scratch_full(self.scratch)  # before the run's own files go
            if not self.keep:  # what matters is in the study; the application's output goes
                shutil.rmtree(workdir, ignore_errors=True)
        duration = time.monotonic() - start
        tail = printable(result.stderr or "")[-STDERR_TAIL:]
        if result.scheduler_killed:
            return Measurement(
                False,
                None,
                duration,
                f"the scheduler ended the job ({result.scheduler_state}); stderr: {tail}",
                retry=True,
            )
        if result.timed_out:
            return Measurement(False, None, duration, f"timed out after {self.timeout:.0f} s; stderr: {tail}")
        if result.returncode != 0:
            how = (
                f"killed by {signal.Signals(-result.returncode).name}"
                if result.returncode < 0
                else f"exit status {result.returncode}"
            )
            cause = failure_cause(result.stderr or "", self.scratch, full)
            return Measurement(False, None, duration, f"{how}{': ' + cause if cause else ''}; stderr: {tail}")
        if result.unfinished_ranks:  # the launcher said 0 (MPICH's does), the ranks never finished
            cause = failure_cause(result.stderr or "", self.scratch, full)
            why = f"the job {result.unfinished_message()} (exit status 0)"
            return Measurement(False, None, duration, f"{why}{': ' + cause if cause else ''}; stderr: {tail}")
        try:
            value = self.objective.value(result.report, result.stdout)
        except ObjectiveError as e:
            return Measurement(False, None, duration, f"{e}; {result.report_error or ''} stderr: {tail}")
        effective, observed = read_back(result.report) if result.report else (requested(doc), {})
        t = result.report.totals if result.report else {}
        run = result.report.data.get("run", {}) if result.report else {}
        return Measurement(
            True,
            value,
            duration,
            effective=effective,
            observed=observed,
            details={
                "bytes_written": t.get("bytes_written"),
                "bytes_read": t.get("bytes_read"),
                "write_mib_s": t.get("write_bandwidth_mib_s"),
                "read_mib_s": t.get("read_bandwidth_mib_s"),
                "io_time_s": t.get("io_time_s"),
                "objective_time_s": self.objective.clock_time(result.report),
                "wall_time_s": run.get("wall_time_s"),
                "ranks": run.get("ranks"),
            },
            report=result.report.data if result.report else None,
        )

    def clean_leftovers(self, interrupted: Sequence[int] = (), everything: bool = True) -> list[Path]:
        """Removes the run directories a killed tuner left in the scratch directory: every one (each finished
        run removes its own), or, with --keep or while other workers use the directory, those of the
        interrupted trials."""
        removed: list[Path] = []
        if not self.scratch.is_dir():
            return removed
        for d in sorted(self.scratch.iterdir()):
            m = RUN_DIR.fullmatch(d.name)
            if not m or not d.is_dir():
                continue
            if (everything and not self.keep) or (m["trial"] is not None and int(m["trial"]) in interrupted):
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
        return removed

    def _drop_caches(self) -> None:
        try:
            os.sync()
            Path("/proc/sys/vm/drop_caches").write_text("3\n")
        except OSError as e:
            self.drop_caches = False
            self.notes.append(f"page caches cannot be dropped here ({e.strerror}); continuing without")


class KernelEvaluator:
    """Trials on an application's I/O kernel, the confirmation round on the application itself (TunIO):
    runs labelled confirm-* go to `application`, every other run to `kernel`."""

    def __init__(self, kernel: JobEvaluator, application: JobEvaluator):
        self.kernel, self.application = kernel, application
        self.objective, self.launcher, self.scratch = kernel.objective, kernel.launcher, kernel.scratch

    @property
    def notes(self) -> list[str]:
        return self.kernel.notes + [n for n in self.application.notes if n not in self.kernel.notes]

    def evaluate(self, doc: dict, label: str) -> Measurement:
        return (self.application if label.startswith("confirm-") else self.kernel).evaluate(doc, label)

    def clean_leftovers(self, interrupted: Sequence[int] = (), everything: bool = True) -> list[Path]:
        return self.kernel.clean_leftovers(interrupted, everything)
