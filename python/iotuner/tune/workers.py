"""Several workers on one study: worker processes on this machine, or a Slurm
job array whose tasks each run one worker (trials as job steps in its
allocation). Each worker is `iotuner worker`: an ask / run / tell loop on the
shared study; the study's records keep them from losing or repeating runs.
Workers get the storage URL in their environment (IOTUNER_STORAGE), never on
their command line, which every user of the node can read."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from rich.console import Console

from .. import runner
from . import objective as objectives
from .launch import LaunchError, slurm
from .store import Store
from .study import urls
from .study_config import SlurmSpec
from .verdict import Verdicts

WATCH_S = 2.0


def worker_command(study: str, heartbeat: int, launcher: str | None = None) -> list[str]:
    """A worker's command line: the storage URL is not on it (see worker_environment)."""
    argv = [sys.executable, "-m", "iotuner", "worker", "--study", study, "--heartbeat", str(heartbeat)]
    return argv + (["--launcher", launcher] if launcher else [])


def worker_environment(storage: str) -> dict[str, str]:
    """This process's environment, with the storage URL for the workers: readable only by its user
    (/proc/PID/environ), and passed on by sbatch to the job's tasks."""
    return {**os.environ, urls.ENV: storage}


class LocalWorkers:
    """Worker processes on this machine; they die with this process (PR_SET_PDEATHSIG)."""

    def __init__(self, procs: list[subprocess.Popen]):
        self.procs = procs

    def wait(self) -> list[int]:
        return [p.wait() for p in self.procs]


def spawn_local(study: str, storage: str, out: Path, n: int, heartbeat: int) -> LocalWorkers:
    procs = []
    for k in range(1, n + 1):
        with open(out / f"worker-{k}.log", "w") as log:
            procs.append(
                subprocess.Popen(
                    worker_command(study, heartbeat),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=worker_environment(storage),
                    preexec_fn=runner.die_with_parent(os.getpid()),
                )
            )
    return LocalWorkers(procs)


def worker_script(study: str, heartbeat: int) -> str:
    return "#!/bin/sh\nexec " + slurm.quote_all(worker_command(study, heartbeat, "slurm")) + "\n"


def submit(store: Store, storage: str, out: Path, n: int, heartbeat: int, console: Console, finish: Callable) -> int:
    """Submits n workers as a Slurm job array and watches them; cancels them if this process dies."""
    config = store.config
    spec = config.slurm or SlurmSpec()
    script = out / "worker.sh"
    script.write_text(worker_script(store.name, heartbeat))
    log = str(out).replace("%", "%%") + "/worker-%A_%a.log"
    try:  # sbatch passes its environment, the storage URL with it, on to the tasks (--export=ALL)
        job = slurm.submit(
            script,
            spec.sbatch_options(job_name=f"iotuner-{store.name}", ntasks=config.ranks)
            + [f"--array=0-{n - 1}", f"--output={log}"],
            env=worker_environment(storage),
        )
    except LaunchError as e:
        print(f"iotuner tune: {e}", file=sys.stderr)
        return 2
    tether = runner.Tether(0, ["scancel", job])  # this tuner killed: its workers cancelled
    console.print(f"submitted {n} workers as Slurm job array {job}; their logs: {out}/worker-{job}_*.log")
    seen = None
    try:
        while slurm.active(job):
            time.sleep(WATCH_S)
            store.refresh()
            now = (store.trials.trials_run(), len(store.trials.records("confirmation")))
            if now != seen:
                seen = now
                console.print(
                    f"[dim]{time.strftime('%H:%M:%S')}[/dim]  {now[0]} trials run, "
                    f"{now[1]} confirmation runs; workers: {', '.join(slurm.active(job)) or 'done'}"
                )
    except KeyboardInterrupt:
        slurm.cancel(job)
        console.print(
            f"\ninterrupted: the workers are cancelled; completed trials are saved; continue with "
            f"{urls.resume_hint(store.name, storage)}"
        )
        return 130
    finally:
        tether.release()
    obj = objectives.of_spec(config.objective)
    outcome = Verdicts(store, obj).result()
    if outcome is None:
        print(
            f"iotuner tune: the workers of job {job} ended before a confirmation round (see their logs); "
            f"continue with {urls.resume_hint(store.name, storage)}",
            file=sys.stderr,
        )
        return 1
    return finish(outcome)
