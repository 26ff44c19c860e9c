"""Under an MPI it was not built for, the library stays out of the way.

libiotuner.so is built against MPICH's mpi.h (an MPI_Comm is an int); in an
Open MPI job it is a pointer. A site that preloads iotuner for every job must
not crash its Open MPI jobs: the library sees the other ABI before MPI_Init,
forwards every call untouched, applies no settings, and says so once.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import h5diff, kernel, mpi, write_json
from iotuner import runner
from iotuner.tune.launch import local

KERNELS = Path(__file__).parent.parent / "kernels"
PROGRAMS = Path(__file__).parent / "programs"
# Open MPI refuses to run as root without both the flag and these
OMPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def _openmpi_hdf5() -> list[str]:
    if not (shutil.which("mpicc.openmpi") and shutil.which("mpirun.openmpi")):
        pytest.skip("needs Open MPI (openmpi-bin, libopenmpi-dev; scripts/setup.sh installs them)")
    r = subprocess.run(["pkg-config", "--cflags", "--libs", "hdf5-openmpi"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("needs Open MPI's parallel HDF5 (libhdf5-openmpi-dev)")
    return r.stdout.split()


@pytest.fixture(scope="module")
def vpicio_openmpi(tmp_path_factory) -> Path:
    """The vpicio kernel, built with Open MPI and Open MPI's HDF5 (1.10.8 too: the same HDF5 API, other MPI)."""
    flags = _openmpi_hdf5()
    exe = tmp_path_factory.mktemp("openmpi") / "vpicio"
    subprocess.run(["mpicc.openmpi", "-O1", f"-I{KERNELS}", str(KERNELS / "vpicio.c"), str(KERNELS / "common.c"),
                    "-o", str(exe), *flags, "-lm"], check=True)
    return exe


def _openmpi_job(exe: Path, out: Path) -> list[str]:
    out.mkdir()
    return ["mpirun.openmpi", "--allow-run-as-root", "-n", "2", str(exe), "-n", "16K", "-r", "-o", str(out)]


@pytest.mark.mpi
def test_an_open_mpi_job_runs_untouched_under_iotuner_run(tmp_path, vpicio_openmpi):
    env = dict(os.environ, **OMPI_ROOT)
    plain = subprocess.run(_openmpi_job(vpicio_openmpi, tmp_path / "plain"), env=env, capture_output=True,
                           text=True, timeout=120)
    assert plain.returncode == 0 and "vpicio verify: ok" in plain.stdout, plain.stderr
    # settings that would change the file's layout if they were applied
    cfg = write_json(tmp_path / "s.json", {"version": 1, "hdf5": {"chunk_dims": [1024], "alignment": [0, "64K"]}})
    r = subprocess.run([sys.executable, "-m", "iotuner", "run", "--config", str(cfg), "--",
                        *_openmpi_job(vpicio_openmpi, tmp_path / "tuned")], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr  # it was a segmentation fault in MPI_Init (139)
    assert "vpicio verify: ok" in r.stdout
    warnings = [line for line in (r.stdout + r.stderr).splitlines() if "warning" in line]
    assert len(warnings) == 1, r.stdout + r.stderr  # rank 0 only
    assert "this job uses Open MPI v4" in warnings[0] and "built for (MPICH)" in warnings[0]
    assert h5diff(tmp_path / "plain" / "vpicio.h5", tmp_path / "tuned" / "vpicio.h5").returncode == 0
    layout = subprocess.run(["h5dump", "-p", "-H", str(tmp_path / "tuned" / "vpicio.h5")], capture_output=True,
                            text=True).stdout
    assert "CONTIGUOUS" in layout and "CHUNKED" not in layout  # no settings applied


@pytest.mark.mpi
def test_an_open_mpi_loaded_after_start_is_seen_at_mpi_init(tmp_path):
    """A process that loads its MPI with dlopen (Python's mpi4py does) after the library started: MPI_Init
    finds the other ABI, and every later MPI call goes straight to Open MPI."""
    _openmpi_hdf5()
    exe = tmp_path / "late_mpi"
    subprocess.run(["gcc", "-O1", str(PROGRAMS / "late_mpi.c"), "-o", str(exe), "-ldl"], check=True)
    env = dict(runner.environment(None, tmp_path / "r.json"), **OMPI_ROOT)
    r = subprocess.run([str(exe), "libmpi.so.40", str(tmp_path / "data.bin")], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and "late_mpi: ok" in r.stdout, r.stdout + r.stderr
    assert r.stderr.count("iotuner: warning") == 1 and "Open MPI" in r.stderr
    assert (tmp_path / "data.bin").read_bytes() == b"".join(i.to_bytes(4, "little") for i in range(256))
    assert not (tmp_path / "r.json").exists()  # nothing measured, no report


@pytest.mark.mpi
def test_the_mpich_build_still_tunes_an_mpich_job(tmp_path):
    """The trampolines reach the wrappers in the ABI the library was built for: settings apply."""
    cfg = write_json(tmp_path / "s.json", {"version": 1, "hdf5": {"chunk_dims": [1024]}})
    result = runner.run([*mpi(), kernel("vpicio"), "-n", "16K", "-o", str(tmp_path)], config=cfg,
                        report=tmp_path / "r.json", capture=True, timeout=120)
    assert result.ok and "warning" not in result.stderr, result.stderr
    checks = [c for c in result.report.checks(knob="chunk_dims") if c.get("dataset")]
    assert len(checks) == 8 and {c["status"] for c in checks} == {"applied"}


def test_the_tune_launcher_skips_an_mpiexec_that_debian_alternatives_pick(tmp_path, monkeypatch):
    """Installing Open MPI flips a bare mpiexec to Open MPI's; the launcher then takes MPICH's own. A real
    mpiexec (a cluster's module) is taken as it is."""
    if not (shutil.which("mpiexec.mpich") and local._alternative("/usr/bin/mpiexec")):
        pytest.skip("needs Debian's mpiexec alternative and mpiexec.mpich")
    (tmp_path / "alt").mkdir()
    (tmp_path / "alt" / "mpiexec").symlink_to("/usr/bin/mpiexec")
    monkeypatch.setenv("PATH", f"{tmp_path / 'alt'}{os.pathsep}{os.environ['PATH']}")
    assert local.default_mpiexec() == "mpiexec.mpich"
    module = tmp_path / "module"
    module.mkdir()
    (module / "mpiexec").write_text("#!/bin/sh\n")
    (module / "mpiexec").chmod(0o755)
    monkeypatch.setenv("PATH", f"{module}{os.pathsep}{os.environ['PATH']}")
    assert local.default_mpiexec() == "mpiexec"
