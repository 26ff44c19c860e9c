"""Run an application under the runtime library and collect its report."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from . import native
from .report import Report, ReportError, load


@dataclass
class RunResult:
    command: list[str]
    returncode: int
    elapsed: float
    report: Report | None
    report_error: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def environment(config: str | os.PathLike | None, report: str | os.PathLike,
                base: Mapping[str, str] | None = None, verbose: bool = False) -> dict[str, str]:
    """The environment that puts the runtime into every process of a job."""
    env = dict(os.environ if base is None else base)
    lib = str(native.runtime_library())
    preload = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = lib if not preload else f"{lib}:{preload}"
    if config is not None:
        env["IOTUNER_CONFIG"] = str(Path(config).resolve())
    else:
        env.pop("IOTUNER_CONFIG", None)
    env["IOTUNER_REPORT"] = str(Path(report).resolve())
    if verbose:
        env["IOTUNER_VERBOSE"] = "1"
    return env


def run(command: Sequence[str], *, config: str | os.PathLike | None = None,
        report: str | os.PathLike | None = None, capture: bool = False, timeout: float | None = None,
        cwd: str | os.PathLike | None = None, env: Mapping[str, str] | None = None,
        verbose: bool = False) -> RunResult:
    """Runs command (launcher included) with the settings in config.

    With capture, stdout and stderr are returned instead of shown. A job past
    its timeout is killed with its whole process group (launcher and ranks).
    """
    tmpdir = None
    if report is None:
        tmpdir = tempfile.TemporaryDirectory(prefix="iotuner-run-")
        report = Path(tmpdir.name) / "report.json"
    report = Path(report)
    report.unlink(missing_ok=True)  # never read a stale report
    full_env = environment(config, report, env, verbose)
    out = err = subprocess.PIPE if capture else None
    start = time.monotonic()
    proc = subprocess.Popen(list(command), cwd=cwd, env=full_env, stdout=out, stderr=err, text=True,
                            errors="replace", start_new_session=True)
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        stdout, stderr = proc.communicate()
    except KeyboardInterrupt:
        _kill_group(proc)
        proc.communicate()
        raise
    elapsed = time.monotonic() - start
    rep, rep_err = None, None
    if report.exists():
        try:
            rep = load(report)
        except ReportError as e:
            rep_err = str(e)
    else:
        rep_err = ("no run report was written (the job did not reach MPI_Finalize or exit, "
                   "or made no HDF5 / MPI-IO calls that iotuner could see)")
    result = RunResult(list(command), proc.returncode, elapsed, rep, rep_err, stdout, stderr, timed_out)
    if tmpdir is not None:
        tmpdir.cleanup()
    return result


def _kill_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=3)
            return
        except subprocess.TimeoutExpired:
            continue
