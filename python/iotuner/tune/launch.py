"""How a trial's job is started. A launcher turns the application's command
into a job and runs it; adding one (Slurm) means one more class here."""

from __future__ import annotations

import shutil
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Sequence

from .. import runner


class LaunchError(RuntimeError):
    pass


class Launcher(ABC):
    name: str

    @abstractmethod
    def command(self, app: Sequence[str]) -> list[str]:
        """The full command line that runs app."""

    def run(self, app: Sequence[str], *, config: Path | None, report: Path, cwd: Path,
            timeout: float | None) -> runner.RunResult:
        return runner.run(self.command(app), config=config, report=report, capture=True, timeout=timeout, cwd=cwd)

    def describe(self) -> str:
        return self.name


class LocalMPI(Launcher):
    """mpiexec on this machine."""

    name = "local"

    def __init__(self, ranks: int, mpiexec: str = "mpiexec.mpich"):
        if ranks < 1:
            raise LaunchError("ranks must be at least 1")
        if not shutil.which(mpiexec):
            raise LaunchError(f"{mpiexec} not found (install MPICH, or give --mpiexec)")
        self.ranks, self.mpiexec = ranks, mpiexec

    def command(self, app: Sequence[str]) -> list[str]:
        return [self.mpiexec, "-n", str(self.ranks), *app]

    def describe(self) -> str:
        return f"{self.mpiexec} -n {self.ranks}"


class Direct(Launcher):
    """The command as given: a serial program, or one that brings its own launcher."""

    name = "none"

    def command(self, app: Sequence[str]) -> list[str]:
        return list(app)

    def describe(self) -> str:
        return "direct"


def make(name: str, ranks: int, mpiexec: str = "mpiexec.mpich") -> Launcher:
    if name == "local":
        return LocalMPI(ranks, mpiexec)
    if name == "none":
        return Direct()
    raise LaunchError(f"unknown launcher '{name}': use local or none")
