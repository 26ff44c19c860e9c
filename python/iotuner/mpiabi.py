"""Which MPI ABI a job uses, so that `iotuner run` preloads the runtime built for it.

The runtime is compiled against one mpi.h (an MPI_Comm is an int in MPICH's ABI, a pointer in Open MPI's), so
an installation may hold one library per ABI (native.runtime_library). A job names its MPI through its launcher
(mpirun.openmpi and mpirun are Open MPI's orterun underneath, mpiexec.mpich MPICH's mpiexec.hydra) or through the
libmpi its program links (Open MPI's soname is libmpi.so.40, MPICH's libmpi.so.12, older MPICH's libmpich.so).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

# the real names of the launchers (after symbolic links: Debian's alternatives, a module's mpirun -> orterun)
_LAUNCHERS = {
    "openmpi": re.compile(r"^(orterun|prterun|mpirun\.openmpi|mpiexec\.openmpi|oshrun)$"),
    "mpich": re.compile(r"^(mpiexec\.hydra|mpiexec\.mpich|mpirun\.mpich|mpiexec\.gforker|hydra_.*)$"),
}
_SONAMES = {
    "openmpi": re.compile(r"^libmpi\.so\.[4-9]\d\b"),
    "mpich": re.compile(r"^(libmpich\w*\.so|libmpi\.so\.12\b)"),
}


def launcher_abi(program: str) -> str | None:
    """The ABI of a launcher, by its real name; None when it is none we know."""
    found = shutil.which(program)
    if not found:
        return None
    name = Path(os.path.realpath(found)).name
    return next((abi for abi, pattern in _LAUNCHERS.items() if pattern.match(name)), None)


def program_abi(program: str) -> str | None:
    """The ABI of the libmpi an executable loads (ldd: its libraries and theirs); None when it loads none."""
    found = shutil.which(program)
    if not found or not _is_elf(found):
        return None
    try:
        out = subprocess.run(["ldd", found], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        soname = line.strip().split(" ", 1)[0]
        for abi, pattern in _SONAMES.items():
            if pattern.match(soname):
                return abi
    return None


def command_abi(command: Sequence[str]) -> str | None:
    """The ABI of a job's command line: the first launcher or program of it that names one (None: unknown,
    e.g. a script, a Python program that loads MPI later, srun with a program linking no MPI)."""
    for word in command:
        if word.startswith("-") or "=" in word:
            continue
        abi = launcher_abi(word) or program_abi(word)
        if abi:
            return abi
    return None


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False
