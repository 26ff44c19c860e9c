"""A launcher of one MPI starting a program of the other: every rank would be rank 0 of a one-rank job of its
own, all writing the same file. `run`, `smart` and `tune` name it in one line, with the fix, and run nothing."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iotuner import mpiabi

PROGRAMS = Path(__file__).parent / "programs"
OMPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


@pytest.fixture(scope="module")
def writers(tmp_path_factory) -> dict[str, Path]:
    """The pure MPI-IO test program, built with MPICH and with Open MPI."""
    if not (shutil.which("mpicc.openmpi") and shutil.which("mpirun.openmpi")):
        pytest.skip("needs Open MPI (openmpi-bin, libopenmpi-dev)")
    out = tmp_path_factory.mktemp("writers")
    built = {}
    for abi, cc, extra in (
        ("mpich", "mpicc.mpich", []),
        ("openmpi", "mpicc.openmpi", ["-L/usr/lib/x86_64-linux-gnu/openmpi/lib"]),
    ):
        exe = out / f"mpiio_write_{abi}"
        subprocess.run([cc, "-O1", str(PROGRAMS / "mpiio_write.c"), "-o", str(exe), *extra], check=True)
        assert mpiabi.program_abi(str(exe)) == abi
        built[abi] = exe
    return built


def iotuner(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=dict(os.environ, **OMPI_ROOT),
    )


CASES = [
    ("mpiexec.mpich", "openmpi", "MPICH's launcher", "an Open MPI program", "mpirun.openmpi"),
    ("mpirun.openmpi", "mpich", "Open MPI's launcher", "an MPICH program", "mpiexec.mpich"),
]


@pytest.mark.mpi
@pytest.mark.parametrize("command", ["run", "smart"])
@pytest.mark.parametrize("launcher,abi,says_launcher,says_program,fix", CASES)
def test_run_and_smart_name_the_launcher_and_its_fix(
    tmp_path, writers, command, launcher, abi, says_launcher, says_program, fix
):
    out = tmp_path / "d.bin"
    r = iotuner(command, "--", launcher, "-n", "2", writers[abi], out, 4096, 4, "collective")
    assert r.returncode == 2, r.stdout + r.stderr
    [line] = r.stderr.splitlines()
    assert line.startswith(f"iotuner {command}: {launcher} is {says_launcher}, but {writers[abi]} is {says_program}")
    assert line.endswith(f"launch it with {fix}")
    assert not out.exists()  # nothing ran


@pytest.mark.mpi
@pytest.mark.parametrize("launcher,abi,says_launcher,says_program,fix", CASES)
def test_tune_names_the_mpiexec_to_give(tmp_path, writers, launcher, abi, says_launcher, says_program, fix):
    r = iotuner(
        "tune",
        "--mpiexec",
        launcher,
        "--trials",
        1,
        "--out",
        tmp_path / "t",
        "--",
        writers[abi],
        tmp_path / "d.bin",
        4096,
        4,
        "collective",
        cwd=tmp_path,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    [line] = r.stderr.splitlines()
    assert f"{launcher} is {says_launcher}, but {writers[abi]} is {says_program}" in line
    assert line.endswith(f"give --mpiexec {fix}")
    assert not (tmp_path / "d.bin").exists() and not (tmp_path / "t" / "study.db").exists()


@pytest.mark.mpi
def test_matching_launchers_run(tmp_path, writers):
    """The check finds nothing to say when launcher and program agree: both jobs run as one 2-rank job."""
    for launcher, abi in (("mpiexec.mpich", "mpich"), ("mpirun.openmpi", "openmpi")):
        assert mpiabi.mismatch([launcher, "-n", "2", str(writers[abi])]) is None
        extra = ["--oversubscribe"] if abi == "openmpi" else []
        r = iotuner(
            "run",
            "--json",
            "--",
            launcher,
            *extra,
            "-n",
            "2",
            writers[abi],
            tmp_path / f"{abi}.bin",
            4096,
            4,
            "collective",
        )
        assert r.returncode == 0, r.stdout + r.stderr
        assert json.loads(r.stdout[r.stdout.index("{") :])["run"]["ranks"] == 2
        assert (tmp_path / f"{abi}.bin").stat().st_size == 2 * 4 * 4096


def test_a_plain_mpiexec_is_known_by_its_version(monkeypatch, tmp_path):
    """A module's mpiexec built from source has no telling name: its --version says whose it is."""
    for real, abi in (("mpiexec.mpich", "mpich"), ("mpirun.openmpi", "openmpi")):
        if not shutil.which(real):
            continue
        d = tmp_path / abi
        d.mkdir()
        target = Path(os.path.realpath(shutil.which(real)))
        # a copy named plainly: its real name says nothing, its --version does
        shutil.copy(target, d / "mpiexec")
        monkeypatch.setenv("PATH", f"{d}{os.pathsep}{os.environ['PATH']}")
        mpiabi._version_abi.cache_clear()
        assert mpiabi.launcher_abi("mpiexec") == abi
        monkeypatch.undo()
