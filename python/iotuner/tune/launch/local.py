"""Jobs on this machine: mpiexec, or the command as given."""

from __future__ import annotations

import shutil
from typing import Sequence

from . import LaunchError, Launcher


# The MPI's own name first (what a loaded module puts on the PATH), then Debian's per-MPI names.
MPIEXEC_NAMES = ("mpiexec", "mpirun", "mpiexec.mpich", "mpiexec.hydra")


def default_mpiexec() -> str:
    """The launcher a user of this machine would type: the first of MPIEXEC_NAMES on the PATH."""
    return next((n for n in MPIEXEC_NAMES if shutil.which(n)), MPIEXEC_NAMES[0])


class LocalMPI(Launcher):
    """mpiexec on this machine."""

    name = "local"

    def __init__(self, ranks: int, mpiexec: str | None = None):
        mpiexec = mpiexec or default_mpiexec()
        if ranks < 1:
            raise LaunchError("ranks must be at least 1")
        if not shutil.which(mpiexec):
            raise LaunchError(f"{mpiexec} not found on the PATH (load your MPI module, or give --mpiexec)")
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
