"""One evaluation: run the application once with a settings document and
measure the objective. Real jobs and the synthetic objective share this
interface, so the tuner treats them alike."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from .. import settings
from ..report import Report
from .launch import Launcher
from .objective import Objective, ObjectiveError

STDERR_TAIL = 2000


@dataclass
class Measurement:
    ok: bool
    value: float | None
    signature: str | None  # the effective settings, canonical JSON: equal signatures share results
    duration_s: float
    error: str | None = None  # why it failed, with the tail of stderr
    details: dict[str, Any] = field(default_factory=dict)


class Evaluator(Protocol):
    objective: Objective

    def evaluate(self, doc: dict, label: str) -> Measurement:
        """Runs once with the settings document; label names the run (scratch directory, logs)."""


def effective_signature(report: Report) -> str:
    """What took effect, as read back: knobs applied or changed, with their effective values.

    Knobs dropped or not applicable did not change the run, so two trials that
    differ only in those are the same experiment.
    """
    eff: dict[str, set[str]] = {}
    for c in report.checks():
        if c["status"] in ("applied", "changed"):
            key = f"{c['layer']}.{c['knob']}" + (f"[{c['dataset']}]" if c.get("dataset") else "")
            eff.setdefault(key, set()).add(str(c["effective"]))
    return json.dumps({k: sorted(v) for k, v in sorted(eff.items())})


class JobEvaluator:
    """Runs the real application through a launcher, in a scratch directory per run."""

    def __init__(self, app: Sequence[str], launcher: Launcher, objective: Objective, scratch: Path,
                 timeout: float | None = None, keep: bool = False, drop_caches: bool = False):
        self.app, self.launcher, self.objective = list(app), launcher, objective
        self.scratch, self.timeout, self.keep, self.drop_caches = Path(scratch), timeout, keep, drop_caches
        self.notes: list[str] = []

    def evaluate(self, doc: dict, label: str) -> Measurement:
        workdir = self.scratch / label
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        cfg = settings.save(doc, workdir / "settings.json")
        app = [a.replace("{scratch}", str(workdir)) for a in self.app]
        if self.drop_caches:
            self._drop_caches()
        start = time.monotonic()
        try:
            result = self.launcher.run(app, config=cfg, report=workdir / "report.json", cwd=workdir,
                                       timeout=self.timeout)
        finally:
            if not self.keep:  # what matters is in the study; the application's output goes
                shutil.rmtree(workdir, ignore_errors=True)
        duration = time.monotonic() - start
        tail = (result.stderr or "")[-STDERR_TAIL:]
        if result.timed_out:
            return Measurement(False, None, None, duration, f"timed out after {self.timeout:.0f} s; stderr: {tail}")
        if result.returncode != 0:
            how = (f"killed by {signal.Signals(-result.returncode).name}" if result.returncode < 0
                   else f"exit status {result.returncode}")
            return Measurement(False, None, None, duration, f"{how}; stderr: {tail}")
        try:
            value = self.objective.value(result.report, result.stdout)
        except ObjectiveError as e:
            return Measurement(False, None, None, duration, f"{e}; {result.report_error or ''} stderr: {tail}")
        sig = effective_signature(result.report) if result.report else json.dumps(doc, sort_keys=True)
        t = result.report.totals if result.report else {}
        return Measurement(True, value, sig, duration, details={
            "bytes_written": t.get("bytes_written"), "bytes_read": t.get("bytes_read"),
            "write_mib_s": t.get("write_bandwidth_mib_s"), "read_mib_s": t.get("read_bandwidth_mib_s")})

    def _drop_caches(self) -> None:
        try:
            os.sync()
            Path("/proc/sys/vm/drop_caches").write_text("3\n")
        except OSError as e:
            self.drop_caches = False
            self.notes.append(f"page caches cannot be dropped here ({e.strerror}); continuing without")
