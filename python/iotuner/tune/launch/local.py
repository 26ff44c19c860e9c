"""Jobs on this machine: mpiexec, or the command as given."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Sequence

from . import Launcher, LaunchError

# The MPI's own name first (what a loaded module puts on the PATH), then Debian's per-MPI names.
MPIEXEC_NAMES = ("mpiexec", "mpirun", "mpiexec.mpich", "mpiexec.hydra")


def default_mpiexec() -> str:
    """The launcher a user of this machine would type: the first of MPIEXEC_NAMES on the PATH. Where that is
    a Debian alternative (installing Open MPI flips it) and MPICH's own is there, MPICH's: the one iotuner is
    built with there (CMakeLists.txt makes the same choice)."""
    found = next((n for n in MPIEXEC_NAMES if shutil.which(n)), MPIEXEC_NAMES[0])
    if found in ("mpiexec", "mpirun") and shutil.which("mpiexec.mpich") and _alternative(shutil.which(found)):
        return "mpiexec.mpich"
    return found


def _alternative(path: str | None) -> bool:
    """Is path a link through Debian's alternatives (/usr/bin/mpiexec -> /etc/alternatives/mpiexec -> ...)?"""
    for _ in range(8):
        if not path or not os.path.islink(path):
            return False
        path = os.path.join(os.path.dirname(path), os.readlink(path))
        if path.startswith("/etc/alternatives/"):
            return True
    return False


class LocalMPI(Launcher):
    """mpiexec on this machine."""

    name = "local"

    def __init__(self, ranks: int, mpiexec: str | None = None):
        mpiexec = mpiexec or default_mpiexec()
        if ranks < 1:
            raise LaunchError("ranks must be at least 1")
        # a launcher with its own options: --mpiexec "mpirun.openmpi --allow-run-as-root --oversubscribe"
        self.argv = launcher_argv(mpiexec)
        if not shutil.which(self.argv[0]):
            raise LaunchError(f"{self.argv[0]} not found on the PATH (load your MPI module, or give --mpiexec)")
        self.ranks, self.mpiexec = ranks, mpiexec

    def command(self, app: Sequence[str]) -> list[str]:
        return [*self.argv, "-n", str(self.ranks), *app]

    def describe(self) -> str:
        return f"{shlex.join(self.argv)} -n {self.ranks}"


# launchers a command may start with; tune's local launcher would start copies of them
OWN_LAUNCHERS = ("mpiexec", "mpirun", "orterun", "prterun", "srun", "aprun", "jsrun", "flux")


def own_launcher(command: Sequence[str]) -> str | None:
    """The MPI launcher a command starts with (mpiexec.mpich, mpirun.openmpi, srun ...), or None."""
    if not command:
        return None
    name = os.path.basename(command[0])
    return name if name.split(".")[0] in OWN_LAUNCHERS else None


def launcher_argv(mpiexec: str) -> list[str]:
    """--mpiexec as words: a launcher and its options, split as a shell would (one LaunchError line when it
    cannot be)."""
    try:
        argv = shlex.split(mpiexec)
    except ValueError as e:
        raise LaunchError(f"--mpiexec {mpiexec!r}: {e}") from None
    if not argv:
        raise LaunchError("--mpiexec is empty: give the MPI launcher, e.g. mpiexec.mpich")
    return argv


class Direct(Launcher):
    """The command as given: a serial program, or one that brings its own launcher."""

    name = "none"

    def command(self, app: Sequence[str]) -> list[str]:
        return list(app)

    def describe(self) -> str:
        return "direct"
