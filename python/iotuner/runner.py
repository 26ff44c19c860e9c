"""Run an application under the runtime library and collect its report."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import mpiabi, native
from .run_report import Report, ReportError, load


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
    scheduler_state: str | None = None  # how a batch scheduler ended the job ("COMPLETED", "TIMEOUT", ...)
    scheduler_killed: bool = False  # the scheduler ended it (time limit, node failure, cancelled), not the job
    mpi_ranks: int = 0  # ranks seen to start MPI (MPI_Init under the runtime); 0: none, or not known
    unfinished_ranks: int = 0  # of those, the ranks that never reached MPI_Finalize

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.unfinished_ranks

    @property
    def signal(self) -> int | None:
        """The signal that killed the job's first process (the launcher, or the application itself)."""
        return -self.returncode if self.returncode < 0 else None

    @property
    def exit_status(self) -> int:
        """The status as a shell reports it: 128 + the signal for a process a signal killed (143: SIGTERM),
        so that batch scripts read it as they read the application's own."""
        if self.signal:
            return 128 + self.signal
        # MPICH's mpiexec says 0 when its ranks exited before MPI_Finalize, or when it was itself signalled
        return 1 if self.returncode == 0 and self.unfinished_ranks else self.returncode

    def unfinished_message(self) -> str | None:
        if not self.unfinished_ranks:
            return None
        started = f"of the {self.mpi_ranks} rank(s) that started MPI"
        return f"did not reach MPI_Finalize on {self.unfinished_ranks} {started}"

    def exit_message(self) -> str | None:
        """What ended the application, when it did not exit with 0 or did not reach MPI_Finalize."""
        unfinished = self.unfinished_message()
        if self.signal:
            try:
                name = f" ({signal.Signals(self.signal).name})"
            except ValueError:
                name = ""
            also = f" (it {unfinished})" if unfinished else ""
            return f"the application was killed by signal {self.signal}{name}{also}: exit status {self.exit_status}"
        if self.returncode:
            also = f" (it {unfinished})" if unfinished else ""
            return f"the application exited with status {self.returncode}{also}"
        if unfinished:
            return f"the application {unfinished}, although its launcher exited with 0: exit status 1"
        return None


def environment(
    config: str | os.PathLike | None,
    report: str | os.PathLike | None,
    base: Mapping[str, str] | None = None,
    verbose: bool = False,
    count_ops: bool = False,
    command: Sequence[str] = (),
    run_id: str | None = None,
) -> dict[str, str]:
    """The environment that puts the runtime into every process of a job (with count_ops: counting mode,
    the operations ROMIO makes inside each MPI-IO data call, in the report's access section). The runtime is
    the one built for the MPI of the command (its launcher or its program: mpiabi), where there is one.
    run_id: the id the report must carry to be this job's (IOTUNER_RUN_ID); report None: no report."""
    env = dict(os.environ if base is None else base)
    abi = mpiabi.command_abi(command)
    lib = str(native.runtime_library(abi))
    if count_ops:
        if abi and abi != native.library_abi(native.runtime_library()):  # its wrappers have the main ABI's types
            raise native.NativeMissing(f"counting mode needs the MPI the library was built for, not {abi}'s")
        lib = f"{lib}:{native.ops_library()}"
        env["IOTUNER_COUNT_OPS"] = "1"
    preload = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = lib if not preload else f"{lib}:{preload}"
    if config is not None:  # absolute, not resolved: a symbolic link loop is the runtime's to report, as any
        env["IOTUNER_CONFIG"] = os.path.abspath(config)  # unreadable settings file (the job runs untuned)
        env.update(mca_environment(config))
    else:
        env.pop("IOTUNER_CONFIG", None)
    if report is not None:
        env["IOTUNER_REPORT"] = os.path.abspath(report)
    else:
        env.pop("IOTUNER_REPORT", None)
    if run_id:
        env["IOTUNER_RUN_ID"] = run_id
    else:
        env.pop("IOTUNER_RUN_ID", None)
    env.pop(FINALIZE_FILE, None)  # run() names this job's own
    env["PATH"] = with_kernels(env.get("PATH"), abi)
    if verbose:
        env["IOTUNER_VERBOSE"] = "1"
    return env


def mca_environment(config: str | os.PathLike) -> dict[str, str]:
    """OMPI_MCA_<parameter> for the document's OMPIO knobs: Open MPI reads them from the environment at MPI_Init
    (the launcher passes them on to the ranks), so they are process-wide; the runtime reads them back. A
    document that does not parse sets none (the runtime says why)."""
    try:  # a regular file only, as the runtime reads it: a FIFO is never waited on
        if not stat.S_ISREG(os.stat(config).st_mode) or os.stat(config).st_size > 16 << 20:
            return {}
        doc = native.core().check_settings(Path(config).read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    mca = {k["name"]: k["mca"] for k in native.core().catalogue()["knobs"] if k["layer"] == "ompio" and k.get("mca")}
    out = {}
    for group in doc.get("groups", []):
        for name, value in (group.get("ompio") or {}).items():
            if name in mca:
                out[f"OMPI_MCA_{mca[name]}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def with_kernels(path: str | None, abi: str | None = None) -> str:
    """A PATH that finds the bundled kernels by name ("mpiexec -n 2 h5ior"), after the user's own programs; for a
    job of an MPI ABI with kernels of its own (mpirun.openmpi: libexec/iotuner/openmpi), those first."""
    kernels = list(dict.fromkeys([str(native.programs_dir(abi)), str(native.programs_dir())]))
    parts = [p for p in (path or os.defpath).split(os.pathsep) if p not in kernels]
    return os.pathsep.join(parts + kernels)


def run(
    command: Sequence[str],
    *,
    config: str | os.PathLike | None = None,
    report: str | os.PathLike | None = None,
    capture: bool = False,
    timeout: float | None = None,
    cwd: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    verbose: bool = False,
    tether: bool = True,
    count_ops: bool = False,
) -> RunResult:
    """Runs command (launcher included) with the settings in config.

    With capture, stdout and stderr are returned instead of shown. A job past
    its timeout is killed with its whole process group (launcher and ranks).
    The job never outlives this process: if it dies, even by SIGKILL, the job
    gets SIGTERM (mpiexec then stops its ranks), then SIGKILL if it lingers
    (see `Tether`; without tether, for a job run by hand, only the SIGTERM).
    """
    tmpdir = None
    if report is None:
        try:
            tmpdir = tempfile.TemporaryDirectory(prefix="iotuner-run-")
            report = Path(tmpdir.name) / "report.json"
        except OSError:  # no temporary directory: the job runs all the same, without a report
            pass
    report = Path(report) if report is not None else None
    # the report must carry this id: an earlier run's report at the path, or another job's written there
    # meanwhile, is never read as this job's (and never deleted beforehand: it may be all the user has)
    run_id = new_run_id()
    full_env = environment(config, report, env, verbose, count_ops, command, run_id)
    marks = finalize_marks(report, run_id)
    if marks is not None:
        full_env[FINALIZE_FILE] = str(marks)
    out = err = subprocess.PIPE if capture else None
    started = time.time()
    start = time.monotonic()
    proc = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=full_env,
        stdout=out,
        stderr=err,
        text=True,
        errors="replace",
        start_new_session=True,
        preexec_fn=die_with_parent(os.getpid()),
    )
    tether = Tether(proc.pid) if tether else None
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
    finally:
        if tether is not None:
            tether.release()
    elapsed = time.monotonic() - start
    rep, rep_err = read_report(report, run_id, started) if report is not None else (None, "no run report was kept")
    result = RunResult(list(command), proc.returncode, elapsed, rep, rep_err, stdout, stderr, timed_out)
    read_finalize_marks(marks, result)
    if tmpdir is not None:
        tmpdir.cleanup()
    return result


def new_run_id() -> str:
    """An id no other job has: the report of this job is the one that carries it."""
    return uuid.uuid4().hex


FINALIZE_FILE = "IOTUNER_FINALIZE_FILE"


def finalize_marks(report: Path | None, run_id: str) -> Path | None:
    """The file in which each rank of the job marks its byte (at its rank's offset): 'S' after MPI_Init, 'F' at
    MPI_Finalize (native/src/runtime/lifecycle.c). Beside the report, where the ranks can reach it; None when it
    cannot be made (nothing is then said about MPI_Finalize). Its name holds this host and process, so that the
    marks a killed iotuner left there are removed by the next one (remove_left_marks)."""
    if report is None:
        return None
    remove_left_marks(report.parent)
    path = report.parent / f".iotuner-{host_name()}-{os.getpid()}-{run_id}.ranks"
    try:
        with open(path, "xb"):
            pass
    except OSError:
        return None
    return path


def host_name() -> str:
    """This host's name as a marks file's name holds it (no '-', which separates its fields)."""
    return socket.gethostname().replace("-", "_") or "host"


def remove_left_marks(directory: Path) -> list[Path]:
    """Removes the marks files in directory that an iotuner of this host left when it was killed (SIGKILL: no
    clean-up ran): those whose process is gone. Another host's, or a live process's, are left alone."""
    removed = []
    try:
        names = list(directory.glob(f".iotuner-{host_name()}-*-*.ranks"))
    except OSError:
        return removed
    for path in names:
        pid = path.name.split("-")[2]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def read_finalize_marks(path: Path | None, result: RunResult) -> None:
    """Fills the result's mpi_ranks and unfinished_ranks from the marks, and removes their file. A job that never
    started MPI under the runtime (a serial program, another MPI) leaves none: nothing is claimed."""
    if path is None:
        return
    try:
        with open(path, "rb") as f:
            marks = f.read(64 << 20)
    except OSError:
        marks = b""
    finally:
        path.unlink(missing_ok=True)
    result.unfinished_ranks = marks.count(b"S")
    result.mpi_ranks = result.unfinished_ranks + marks.count(b"F")
    if result.report is None and result.report_error == NO_REPORT and result.mpi_ranks:
        if result.unfinished_ranks:
            result.report_error = f"no run report was written: the job {result.unfinished_message()}"
        else:
            result.report_error = (
                f"no run report came back although all {result.mpi_ranks} rank(s) reached MPI_Finalize (the "
                "runtime's warning on stderr says why)"
            )


NO_REPORT = (
    "no run report was written (the job did not reach MPI_Finalize or exit, made no HDF5 / MPI-IO calls "
    "that iotuner could see, or used an MPI iotuner was not built for)"
)


def read_report(
    report: Path, run_id: str | None = None, started: float | None = None
) -> tuple[Report | None, str | None]:
    """(the run report, or why there is none). With run_id, only the report that carries it: another is an
    earlier run's (older than `started`, the job's start on the wall clock), or another job's written to the
    same path while this one ran."""
    try:
        mtime = report.stat().st_mtime
    except OSError:
        return None, NO_REPORT
    try:
        rep = load(report)
    except ReportError as e:
        return None, str(e)
    found = rep.run.get("run_id")
    if run_id and found != run_id:
        none = NO_REPORT.replace("no run report was written", "this job wrote none")
        if started is not None and mtime < started:
            return None, f"the report at {report} is an earlier run's, not this job's: {none}"
        return None, (
            f"the report at {report} is another job's (run id {found}), written to the same path while "
            f"this job (run id {run_id}) ran: its numbers are not this job's; give each job its own "
            "--report"
        )
    return rep, None


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


PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def die_with_parent(parent: int):
    """preexec_fn: the job's first process gets SIGTERM when its parent dies (Linux), so a
    killed tuner leaves no mpiexec behind; mpiexec passes SIGTERM on to its ranks."""
    if _LIBC is None:
        return None

    def setup() -> None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: too late for the signal
            os.kill(os.getpid(), signal.SIGTERM)

    return setup


_WATCHDOG = """
import json, os, signal, subprocess, sys, time
leader, grace, cancel = int(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3])
signal.signal(signal.SIGINT, signal.SIG_IGN)
if sys.stdin.read() == "done":
    sys.exit(0)
if cancel:  # a job a scheduler runs for us: the scheduler ends it
    subprocess.run(cancel, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if leader <= 0:
    sys.exit(0)
def tree():
    children = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [leader]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found
def alive(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
procs = tree() if os.path.isdir("/proc") else [leader]
for sig in (signal.SIGTERM, signal.SIGKILL):
    targets = [leader] if sig == signal.SIGTERM else [p for p in procs if alive(p)]
    for pid in targets:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    end = time.monotonic() + grace
    while any(alive(p) for p in procs) and time.monotonic() < end:
        time.sleep(0.05)
    if not any(alive(p) for p in procs):
        break
"""


class Tether:
    """A small watchdog process that ends the job if this process dies.

    It reads a pipe from this process: "done" when the job ended here, end of
    file when this process died without saying so (SIGKILL, a crash). Then it
    sends the job's first process SIGTERM (mpiexec stops its ranks), and after
    a grace period SIGKILL to every process of the job's tree as it was at the
    tuner's death (hydra puts its proxies and ranks in process groups of their
    own, so the job's group is not enough). So the job's processes never
    outlive the tuner and keep writing into a resumed study's runs, and a hung
    job stops. It runs in its own session: a signal to this process's group
    does not stop it. For a job a scheduler runs (group 0), it runs the
    scheduler's cancel command instead (`cancel`, an argument vector).
    """

    GRACE_S = 3.0

    def __init__(self, group: int, cancel: Sequence[str] = ()):
        self._proc = None
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-S", "-c", _WATCHDOG, str(group), str(self.GRACE_S), json.dumps(list(cancel))],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                text=True,
                start_new_session=True,
            )
        except OSError:  # no watchdog: PR_SET_PDEATHSIG alone still stops the launcher
            self._proc = None

    def release(self) -> None:
        if self._proc is None:
            return
        try:
            self._proc.communicate("done", timeout=5)
        except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
            self._proc.kill()
            self._proc.wait()
