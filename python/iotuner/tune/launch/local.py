"""Jobs on this machine: mpiexec, or the command as given."""

from __future__ import annotations

import shutil
from typing import Sequence

from . import LaunchError, Launcher


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
