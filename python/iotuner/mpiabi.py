"""Which MPI ABI a job uses, so that `iotuner run` preloads the runtime built for it.

The runtime is compiled against one mpi.h (an MPI_Comm is an int in MPICH's ABI, a pointer in Open MPI's), so
an installation may hold one library per ABI (native.runtime_library). A job names its MPI through its launcher
(mpirun.openmpi and mpirun are Open MPI's orterun underneath, mpiexec.mpich MPICH's mpiexec.hydra) or through the
libmpi its program links (Open MPI's soname is libmpi.so.40, MPICH's libmpi.so.12, older MPICH's libmpich.so).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

# the real names of the launchers (after symbolic links: Debian's alternatives, a module's mpirun -> orterun)
_LAUNCHERS = {
    "openmpi": re.compile(r"^(orterun|prterun|mpirun\.openmpi|mpiexec\.openmpi|oshrun)$"),
    "mpich": re.compile(r"^(mpiexec\.hydra|mpiexec\.mpich|mpirun\.mpich|mpiexec\.gforker|hydra_.*)$"),
}
_SONAMES = {
    "openmpi": re.compile(r"^libmpi\.so\.[4-9]\d\b"),
    "mpich": re.compile(r"^(libmpich\w*\.so|libmpi\.so\.12\b)"),
}


_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH"}
# what `--version` of a launcher says (a module's mpiexec built from source has no telling name)
_VERSIONS = {"openmpi": re.compile(r"\((OpenRTE|Open MPI|PRRTE)\)"), "mpich": re.compile(r"HYDRA build details")}
_GENERIC = re.compile(r"^(mpiexec|mpirun)$")  # the only names asked for `--version`: never an application
# the launcher to name in a fix, per MPI, the first found on the PATH
_FIXES = {
    "openmpi": ("mpirun.openmpi", "mpiexec.openmpi", "orterun", "mpirun"),
    "mpich": ("mpiexec.mpich", "mpiexec.hydra", "mpiexec"),
}


def launcher_abi(program: str) -> str | None:
    """The ABI of a launcher, by its real name, else (for a plain mpiexec / mpirun) by what its `--version`
    says; None when it is none we know."""
    found = shutil.which(program)
    if not found:
        return None
    name = Path(os.path.realpath(found)).name
    abi = next((abi for abi, pattern in _LAUNCHERS.items() if pattern.match(name)), None)
    if abi is None and _GENERIC.match(name):
        abi = _version_abi(os.path.realpath(found))
    return abi


@functools.lru_cache(maxsize=16)
def _version_abi(path: str) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = out.stdout + out.stderr
    return next((abi for abi, pattern in _VERSIONS.items() if pattern.search(text)), None)


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


def mismatch(command: Sequence[str]) -> tuple[str, str, str, str] | None:
    """(launcher, its ABI, program, its ABI) when a job's launcher is of one MPI and the program it starts
    links another's libmpi: each rank then starts as a one-rank job of its own. None when they agree or
    either is unknown."""
    words = [w for w in command if not w.startswith("-") and "=" not in w]
    for i, word in enumerate(words):
        launcher = launcher_abi(word)
        if launcher is None:
            continue
        for later in words[i + 1 :]:
            program = program_abi(later)
            if program is not None:
                return (word, launcher, later, program) if program != launcher else None
        return None
    return None


def mismatch_message(found: tuple[str, str, str, str], fix: str | None = None) -> str:
    """One line naming the mismatch and its fix (fix: how to give the right launcher; default: the launcher
    itself, as `run` and `smart` take it)."""
    launcher, l_abi, program, p_abi = found
    right = next((n for n in _FIXES[p_abi] if launcher_abi(n) == p_abi), _FIXES[p_abi][0])
    how = fix.format(launcher=right) if fix else f"launch it with {right}"
    return (
        f"{launcher} is {_NAMES[l_abi]}'s launcher, but {program} is an {_NAMES[p_abi]} program: its ranks "
        f"would run as separate one-rank jobs; {how}"
    )


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


@functools.cache
def _ompi_components(ompi_info: str) -> dict[str, frozenset[str]]:
    """{framework: component names} as this Open MPI's ompi_info lists them ("MCA fcoll: vulcan (...)")."""
    try:
        out = subprocess.run([ompi_info], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    found: dict[str, set[str]] = {}
    for framework, component in re.findall(r"^\s*MCA (\w+): (\w+) \(", out, re.M):
        found.setdefault(framework, set()).add(component)
    return {k: frozenset(v) for k, v in found.items()}


def ompio_offered(framework: str, values) -> tuple:
    """The components of an OMPIO framework (fcoll, fbtl, fs) among `values` that this machine's Open MPI has
    (Open MPI 5 dropped fcoll's two_phase); all of them where ompi_info is missing or lists none of them."""
    path = shutil.which("ompi_info")
    have = _ompi_components(path).get(framework, frozenset()) if path else frozenset()
    offered = tuple(v for v in values if v in have)
    return offered or tuple(values)
