"""Shared fixtures: test programs compiled once a run, kernels, job helpers.

`make test` and `make check` run the tests on 2 pytest-xdist workers (each a session of its own), so what
several tests build is built once a run for all workers (`built_once`)."""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from iotuner import native, runner

MPIEXEC = "mpiexec.mpich"
MPICC = "mpicc.mpich"
RANKS = 2  # one per core here; more ranks than cores make collectives spin (see docs/machine.md)
PROGRAMS = Path(__file__).parent / "programs"


def mpi(n: int = RANKS) -> list[str]:
    return [MPIEXEC, "-n", str(n)]


def kernel(name: str) -> str:
    return str(native.executable(name))


def flat(text: str) -> str:
    """Printed text with its lines joined: the printouts wrap to the terminal width."""
    return " ".join(text.split())


def importorskip(name: str, reason: str | None = None):
    """pytest.importorskip for optional parts, which may be broken as well as missing: any exception at import
    skips (on Python 3.13 PyDarshan raises RuntimeError, which pytest.importorskip lets through)."""
    try:
        return importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 - broken counts as missing (iotuner/optional.py)
        from iotuner.optional import reason as why

        pytest.skip(f"{reason or name}: {why(e)}", allow_module_level=True)


def write_json(path: Path, doc) -> Path:
    """Writes a settings document as is (tests also write broken ones)."""
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=1))
    return path


def one_knob_space(path: Path, name: str, knob: str, values: list) -> Path:
    """A search space of one knob, for `iotuner tune --space`."""
    return write_json(path, {"name": name, "dimensions": [{"knob": knob, "values": values}]})


def run_job(command, *, config=None, report=None, timeout=300, **kw) -> runner.RunResult:
    return runner.run([str(c) for c in command], config=config, report=report, capture=True, timeout=timeout, **kw)


def h5diff(a: Path, b: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["h5diff", str(a), str(b)], capture_output=True, text=True)


def built_once(tmp_path_factory, name: str, build: Callable[[Path], object]):
    """`build(directory)` run once for the whole test run, whichever xdist worker asks first (the others wait
    for it), and what it returned (JSON) to every caller. Without xdist, once a session."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's directory, above each worker's own
    out, done = root / name, root / f"{name}.json"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(out, ignore_errors=True)  # a worker whose build failed left it half made
            out.mkdir()
            done.write_text(json.dumps(build(out)))
    return json.loads(done.read_text())


def _pkg_config(*args: str) -> list[str]:
    return subprocess.run(
        ["pkg-config", *args, "hdf5-mpich"], check=True, capture_output=True, text=True
    ).stdout.split()


@pytest.fixture(scope="session")
def programs(tmp_path_factory) -> dict[str, Path]:
    """Test programs, built against the shared parallel HDF5 (and Debian's serial one when present)."""
    return {name: Path(exe) for name, exe in built_once(tmp_path_factory, "programs", _build_programs).items()}


def _build_programs(out: Path) -> dict[str, str]:
    hdf5 = _pkg_config("--cflags") + _pkg_config("--libs")
    built: dict[str, str] = {}

    def build(name: str, *, uses_hdf5: bool = True) -> None:
        exe = out / name
        subprocess.run(
            [MPICC, "-O1", str(PROGRAMS / f"{name}.c"), "-o", str(exe)] + (hdf5 if uses_hdf5 else []), check=True
        )
        built[name] = str(exe)

    build("serial_h5")
    build("mpiio_write", uses_hdf5=False)
    build("chunk_fallback")
    build("selections")
    build("smart_patterns")
    build("ior_check")
    build("ior_hdf5")
    build("fpp_steps", uses_hdf5=False)
    build("two_phase", uses_hdf5=False)
    build("subarray_view", uses_hdf5=False)
    build("threads_posix", uses_hdf5=False)
    build("module_events")
    serial_lib = Path("/usr/lib/x86_64-linux-gnu/libhdf5_serial.so.103")
    if serial_lib.exists():  # same program against the serial HDF5 build: no MPI anywhere in the process
        exe = out / "serial_h5_serialhdf5"
        subprocess.run(
            [
                "gcc",
                "-O1",
                *_pkg_config("--cflags"),
                str(PROGRAMS / "serial_h5.c"),
                "-o",
                str(exe),
                f"-l:{serial_lib.name}",
            ],
            check=True,
        )
        built["serial_h5_serialhdf5"] = str(exe)
    return built


MPI_TOOLS = (MPIEXEC, MPICC, "h5diff", "pkg-config")


def pytest_collection_modifyitems(config, items):
    """Tests that run MPI jobs are marked `mpi` (or use the `programs` fixture): without MPI and parallel
    HDF5 they are skipped, and every other test still runs."""
    missing = [t for t in MPI_TOOLS if not shutil.which(t)]
    for item in items:
        needs = item.get_closest_marker("mpi") is not None or "programs" in getattr(item, "fixturenames", ())
        if needs and "programs" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.mpi)
        if needs and missing:
            item.add_marker(
                pytest.mark.skip(
                    reason=f"needs MPI and parallel HDF5 (missing: {', '.join(missing)}); run scripts/setup.sh"
                )
            )


@pytest.fixture(scope="session", autouse=True)
def _clean_environment():
    os.environ.pop("IOTUNER_CONFIG", None)
    os.environ.pop("IOTUNER_REPORT", None)


class MultiFileApp:
    """A test application of several C files (tests/programs/kernel_*), built like the others."""

    def __init__(self, name: str, exe: Path, sources: list[Path], database: Path):
        self.name, self.exe, self.sources, self.database = name, exe, sources, database


@pytest.fixture(scope="session")
def kernel_apps(tmp_path_factory) -> dict[str, MultiFileApp]:
    """The applications of `iotuner kernel`'s tests, each compiled file by file against the shared
    parallel HDF5 with the commands recorded in a compile_commands.json (as CMake or Bear write it)."""
    built = built_once(tmp_path_factory, "kernel_apps", _build_kernel_apps)
    return {
        name: MultiFileApp(name, Path(exe), sorted((PROGRAMS / name).glob("*.c")), Path(exe).parent)
        for name, exe in built.items()
    }


def _build_kernel_apps(out: Path) -> dict[str, str]:
    cflags = ["-O2", *_pkg_config("--cflags")]
    libs = _pkg_config("--libs") + ["-lm"]
    apps = {}
    for d in sorted(PROGRAMS.glob("kernel_*")):
        build = out / d.name
        build.mkdir()
        entries, objects = [], []
        for src in sorted(d.glob("*.c")):
            obj = build / (src.stem + ".o")
            args = [MPICC, *cflags, "-c", str(src), "-o", str(obj)]
            subprocess.run(args, check=True, cwd=build)
            entries.append({"directory": str(build), "file": str(src), "arguments": args})
            objects.append(str(obj))
        exe = build / d.name
        subprocess.run([MPICC, *objects, "-o", str(exe), *libs], check=True)
        (build / "compile_commands.json").write_text(json.dumps(entries, indent=1))
        apps[d.name] = str(exe)
    return apps


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory no file can be made in, by this user. As root (who writes through a directory's mode): a
    read-only bind mount of a test directory onto itself; where mounting is not allowed, /sys (no file can be
    made there, even by root). As another user, a directory of mode 0555."""
    d = tmp_path / "ro"
    d.mkdir()
    if os.geteuid() != 0:
        d.chmod(0o555)
        yield d
        d.chmod(0o755)
        return
    bound = subprocess.run(["mount", "--bind", str(d), str(d)], capture_output=True).returncode == 0
    if bound and subprocess.run(["mount", "-o", "remount,bind,ro", str(d)], capture_output=True).returncode == 0:
        yield d
    else:
        yield Path("/sys")
    if bound:
        subprocess.run(["umount", str(d)], check=True)
