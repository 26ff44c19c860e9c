"""Shared fixtures: test programs compiled per session, kernels, job helpers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from iotuner import native, runner

MPIEXEC = "mpiexec.mpich"
MPICC = "mpicc.mpich"
RANKS = 2  # one per core here; more ranks than cores make collectives spin (see ENVIRONMENT.md)
PROGRAMS = Path(__file__).parent / "programs"


def mpi(n: int = RANKS) -> list[str]:
    return [MPIEXEC, "-n", str(n)]


def kernel(name: str) -> str:
    return str(native.executable(name))


def write_json(path: Path, doc) -> Path:
    """Writes a settings document as is (tests also write broken ones)."""
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=1))
    return path


def run_job(command, *, config=None, report=None, timeout=300, **kw) -> runner.RunResult:
    return runner.run([str(c) for c in command], config=config, report=report, capture=True, timeout=timeout, **kw)


def h5diff(a: Path, b: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["h5diff", str(a), str(b)], capture_output=True, text=True)


def _pkg_config(*args: str) -> list[str]:
    return subprocess.run(["pkg-config", *args, "hdf5-mpich"], check=True, capture_output=True,
                          text=True).stdout.split()


@pytest.fixture(scope="session")
def programs(tmp_path_factory) -> dict[str, Path]:
    """Test programs, built against the shared parallel HDF5 (and Debian's serial one when present)."""
    out = tmp_path_factory.mktemp("programs")
    hdf5 = _pkg_config("--cflags") + _pkg_config("--libs")
    built: dict[str, Path] = {}

    def build(name: str, *, uses_hdf5: bool = True) -> None:
        exe = out / name
        subprocess.run([MPICC, "-O1", str(PROGRAMS / f"{name}.c"), "-o", str(exe)] + (hdf5 if uses_hdf5 else []),
                       check=True)
        built[name] = exe

    build("serial_h5")
    build("mpiio_write", uses_hdf5=False)
    build("chunk_fallback")
    build("selections")
    build("smart_patterns")
    build("ior_check")
    build("fpp_steps", uses_hdf5=False)
    serial_lib = Path("/usr/lib/x86_64-linux-gnu/libhdf5_serial.so.103")
    if serial_lib.exists():  # same program against the serial HDF5 build: no MPI anywhere in the process
        exe = out / "serial_h5_serialhdf5"
        subprocess.run(["gcc", "-O1", *_pkg_config("--cflags"), str(PROGRAMS / "serial_h5.c"), "-o", str(exe),
                        f"-l:{serial_lib.name}"], check=True)
        built["serial_h5_serialhdf5"] = exe
    return built


@pytest.fixture(scope="session", autouse=True)
def _tools_present():
    missing = [t for t in (MPIEXEC, MPICC, "h5diff", "pkg-config") if not shutil.which(t)]
    if missing:
        pytest.exit(f"missing tools: {', '.join(missing)}; run 'make setup' (scripts/setup.sh) first", returncode=3)
    native.runtime_library()  # fails clearly when the package was installed without its native part
    os.environ.pop("IOTUNER_CONFIG", None)
    os.environ.pop("IOTUNER_REPORT", None)
