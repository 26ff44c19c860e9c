"""Trials on Slurm: a job step inside an allocation, or a job of its own.

Inside an allocation (SLURM_JOB_ID is set: a worker started by `sbatch`, or
`iotuner tune --submit`) each trial's application is a job step, `srun
--mpi=pmi2 -n RANKS APP`, started in about 0.2 s. Outside one, each trial is a
job of its own: a small batch script runs the application under `srun`,
`sbatch --parsable` submits it, `squeue` watches it and `sacct` tells how it
ended. A job the scheduler ended (time limit, node failure, `scancel`) fails
its trial with Slurm's reason, and the tuner runs that trial again once. If
the tuner dies, even by SIGKILL, a watchdog cancels its jobs (`scancel`).

Why not submitit: it runs pickled Python functions on the allocation; a
trial is an MPI command line that has to run under `srun` with our
LD_PRELOAD environment, and the tuner needs the job's Slurm state and exit
code, which `sbatch --parsable` and `sacct` give directly. Every command line
and batch script is built from argument vectors, quoted for the shell where a
script needs them: no application argument or path is ever interpreted.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ... import mpiabi, native, runner
from ..study_config import SlurmSpec
from . import Launcher, LaunchError

POLL_S = 0.25
SCHEDULER_ENDED = ("CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE")  # not the job's doing


def in_allocation() -> bool:
    return bool(os.environ.get("SLURM_JOB_ID"))


def _slurm(argv: Sequence[str], timeout: float = 60, env: Mapping[str, str] | None = None) -> str:
    try:
        r = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, env=env)
    except FileNotFoundError:
        raise LaunchError(f"{argv[0]} not found: is Slurm installed here (and SLURM_CONF set)?") from None
    except subprocess.TimeoutExpired:
        raise LaunchError(f"{argv[0]} did not answer in {timeout:.0f} s: is slurmctld up?") from None
    if r.returncode != 0:
        raise LaunchError(f"{' '.join(argv[:2])} failed: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def submit(script: Path, options: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """sbatch --parsable: the job id (env: the environment sbatch passes on to the job)."""
    out = _slurm(["sbatch", "--parsable", *options, str(script)], env=env)
    return out.strip().split(";")[0]


def active(job: str) -> list[str]:
    """States of the job's pending or running parts (array tasks included); [] when none is left."""
    try:
        out = _slurm(["squeue", "-h", "-j", job, "-o", "%T"])
    except LaunchError as e:
        if "Invalid job id" in str(e):
            return []
        raise
    return [line.strip() for line in out.splitlines() if line.strip()]


def ended(job: str, wait_s: float = 5.0) -> tuple[str, str]:
    """(state, exit code "N:S") of a finished job, from accounting or, without it, the job-completion log
    (which the scheduler writes a moment after the job leaves the queue)."""
    end = time.monotonic() + wait_s
    while True:
        for argv in (
            ["sacct", "-n", "-P", "-X", "-j", job, "-o", "State,ExitCode"],
            ["sacct", "-c", "-n", "-P", "-j", job, "-o", "State,ExitCode"],
        ):
            try:
                out = _slurm(argv)
            except LaunchError:
                continue
            rows = [line.split("|") for line in out.splitlines() if "|" in line]
            if rows:
                return rows[0][0].strip(), rows[0][1].strip()
        if time.monotonic() > end:
            return "UNKNOWN", "0:0"
        time.sleep(POLL_S)


def cancel(job: str) -> None:
    subprocess.run(["scancel", job], capture_output=True)


def describe_end(job: str, state: str) -> str:
    return f"Slurm ended job {job}: {state}"


def quote_all(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(str(a)) for a in argv)


class Slurm(Launcher):
    name = "slurm"

    def __init__(self, ranks: int, spec: SlurmSpec, label: str = "iotuner"):
        if ranks < 1:
            raise LaunchError("ranks must be at least 1")
        self.ranks, self.spec, self.label = ranks, spec, label

    def command(self, app: Sequence[str]) -> list[str]:
        argv = ["srun"] + ([f"--mpi={self.spec.mpi}"] if self.spec.mpi != "none" else []) + ["-n", str(self.ranks)]
        if self.spec.tasks_per_node:
            argv.append(f"--ntasks-per-node={self.spec.tasks_per_node}")
        return argv + list(app)

    def describe(self) -> str:
        return "srun (a job step per trial)" if in_allocation() else "sbatch (a Slurm job per trial)"

    def run(
        self, app: Sequence[str], *, config: Path | None, report: Path, cwd: Path, timeout: float | None
    ) -> runner.RunResult:
        if in_allocation():
            return super().run(app, config=config, report=report, cwd=cwd, timeout=timeout)
        return self._job(app, config=config, report=report, cwd=Path(cwd), timeout=timeout)

    def batch_script(
        self, app: Sequence[str], *, config: Path | None, report: Path, cwd: Path, marks: Path | None = None
    ) -> str:
        """The job's script: every argument and path quoted, the runtime preloaded into srun's tasks only, the
        bundled kernels on the PATH (as with every launcher)."""
        abi = mpiabi.command_abi(app)
        lib = native.runtime_library(abi)  # the build of the application's MPI, and its kernels
        env = [
            f"LD_PRELOAD={lib}",
            f"IOTUNER_REPORT={Path(report).resolve()}",
            f"PATH={runner.with_kernels(os.environ.get('PATH'), abi)}",
        ]
        if marks is not None:  # each rank marks MPI_Init and MPI_Finalize (runner.finalize_marks)
            env.append(f"{runner.FINALIZE_FILE}={Path(marks).resolve()}")
        if config is not None:
            env.append(f"IOTUNER_CONFIG={Path(config).resolve()}")
            env += [f"{k}={v}" for k, v in runner.mca_environment(config).items()]
        return (
            "#!/bin/sh\n"
            f"cd {shlex.quote(str(cwd))} || exit 1\n"
            f"exec env {quote_all(env)} {quote_all(self.command(app))} "
            f"> {shlex.quote(str(cwd / 'stdout'))} 2> {shlex.quote(str(cwd / 'stderr'))}\n"
        )

    def _job(
        self, app: Sequence[str], *, config: Path | None, report: Path, cwd: Path, timeout: float | None
    ) -> runner.RunResult:
        script = cwd / "job.sh"
        marks = runner.finalize_marks(report, runner.new_run_id())
        script.write_text(self.batch_script(app, config=config, report=report, cwd=cwd, marks=marks))
        report.unlink(missing_ok=True)
        start = time.monotonic()
        job = submit(
            script,
            self.spec.sbatch_options(job_name=self.label, ntasks=self.ranks, timeout_s=timeout)
            + ["--output=/dev/null", "--error=/dev/null"],
        )
        tether = runner.Tether(0, ["scancel", job])  # the tuner dies: the job is cancelled
        timed_out = False
        try:
            while active(job):
                if timeout is not None and time.monotonic() - start > timeout:
                    cancel(job)
                    timed_out = True
                time.sleep(POLL_S)
        except BaseException:
            cancel(job)
            raise
        finally:
            tether.release()
        state, code = ended(job)
        status, _, sig = code.partition(":")
        returncode = -int(sig) if sig.isdigit() and int(sig) else int(status) if status.isdigit() else 1
        killed = not timed_out and any(state.startswith(s) for s in SCHEDULER_ENDED)
        if state != "COMPLETED" and returncode == 0:
            returncode = 1
        stdout = _read(cwd / "stdout")
        stderr = _read(cwd / "stderr")
        if killed:
            stderr += f"\n{describe_end(job, state)}"
        rep, err = runner.read_report(report)
        result = runner.RunResult(
            [*self.command(app)],
            returncode,
            time.monotonic() - start,
            rep,
            err,
            stdout,
            stderr,
            timed_out,
            state,
            killed,
        )
        runner.read_finalize_marks(marks, result)
        return result


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
