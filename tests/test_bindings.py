"""Fortran programs, under every binding (`use mpi_f08`, `use mpi`, `include 'mpif.h'`) and both MPIs.

Open MPI's Fortran bindings and MPICH's `use mpi_f08` call the profiling names (PMPI_Init, PMPI_File_open,
...) directly: the runtime interposes them too, and counts a call once even when the MPI library's MPI_x
reaches its own PMPI_x. A job whose MPI_Init goes around the runtime anyway gets a report marked incomplete,
with one warning, never one rank's share passed off as the job's totals.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import MPICC, flat, mpi, run_job, write_json
from iotuner import native, runner

pytestmark = pytest.mark.mpi

PROGRAMS = Path(__file__).parent / "programs"
OMPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
OPENMPI_LIB = "/usr/lib/x86_64-linux-gnu/openmpi/lib"  # Debian's mpif90.openmpi does not say it (-lmpi)
MIB = 8  # per rank, in 1 MiB calls
BINDINGS = {"f08": "-DF08", "mpi": "-DMPI", "mpifh": "-DMPIFH"}
MPIS = {  # compiler, HDF5 compiler, launcher, extra flags
    "mpich": ("mpifort.mpich", "h5pfc.mpich", ["mpiexec.mpich"], []),
    "openmpi": (
        "mpifort.openmpi",
        "h5pfc.openmpi",
        ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"],
        [f"-L{OPENMPI_LIB}"],
    ),
}


def _compiler(mpi_name: str, hdf5: bool = False) -> list[str]:
    fc, h5fc, _, extra = MPIS[mpi_name]
    tool = h5fc if hdf5 else fc
    if not shutil.which("gfortran") or not shutil.which(tool):
        pytest.skip(f"needs gfortran and {tool} (scripts/setup.sh installs them)")
    if mpi_name == "openmpi" and native.library_abi(native.runtime_library("openmpi")) != "openmpi":
        pytest.skip("no runtime built for Open MPI")
    # h5pfc links HDF5 statically by default: the preloaded runtime would see no HDF5 call
    return [tool, "-O1"] + (["-shlib"] if hdf5 else []) + extra


@pytest.fixture(scope="module")
def fortran(tmp_path_factory):
    out = tmp_path_factory.mktemp("fortran")
    built = {}

    def build(source: str, mpi_name: str, binding: str, hdf5: bool = False) -> Path:
        key = (source, mpi_name, binding)
        if key not in built:
            exe = out / f"{source}_{mpi_name}_{binding}"
            subprocess.run(
                _compiler(mpi_name, hdf5) + [BINDINGS[binding], str(PROGRAMS / f"{source}.F90"), "-o", str(exe)],
                check=True,
                cwd=out,
            )
            built[key] = exe
        return built[key]

    return build


def _launch(mpi_name: str) -> list[str]:
    return MPIS[mpi_name][2] + ["-n", "2"]


def _run(mpi_name, command, tmp_path, settings):
    cfg = write_json(tmp_path / "s.json", {"version": 1, "mpiio": settings})
    return runner.run(
        [str(c) for c in _launch(mpi_name) + command],
        config=cfg,
        report=tmp_path / "r.json",
        env=dict(os.environ, **OMPI_ROOT),
        capture=True,
        timeout=300,
    )


@pytest.mark.parametrize("binding", ["f08", "mpi", "mpifh"])
@pytest.mark.parametrize("mpi_name", ["mpich", "openmpi"])
def test_fortran_mpiio_is_measured_and_tuned(tmp_path, fortran, mpi_name, binding):
    """2 ranks write 8 MiB each collectively (set_view + write_all, 1 MiB calls), then read it back
    (read_at_all): two MPI-IO phases of both ranks and every byte once, every call counted once, and the hint
    applied, read back by the runtime and by the program itself (MPI_File_get_info)."""
    exe = fortran("mpiio_fortran", mpi_name, binding)
    result = _run(mpi_name, [exe, tmp_path / "data.bin", MIB], tmp_path, {"cb_buffer_size": "4M"})
    assert result.ok and "mpiio_fortran: ok" in result.stdout, result.stdout + result.stderr
    assert "cb_buffer_size=4194304" in result.stdout  # the MPI library's own answer to the program
    assert "warning" not in result.stderr, result.stderr
    report = result.report
    assert report.incomplete is None
    assert report.run["mpi"] and report.run["ranks"] == 2
    assert report.run["mpi_library"].startswith({"mpich": "MPICH", "openmpi": "Open MPI"}[mpi_name])
    total = 2 * MIB << 20
    assert [(p["kind"], p["ranks"], p["bytes_written"], p["bytes_read"]) for p in report.phases] == [
        ("mpiio", 2, total, 0),
        ("mpiio", 2, 0, total),
    ]
    write, read = report.phases
    assert write["mpiio"]["write_calls"] == 2 * MIB and read["mpiio"]["read_calls"] == 2 * MIB
    for phase in report.phases:
        (check,) = phase["settings"]
        assert (check["knob"], check["status"], check["effective"]) == ("cb_buffer_size", "applied", "4194304")
        assert phase["mpi_hints"]["cb_buffer_size"] == "4194304"


@pytest.mark.parametrize("binding", ["f08", "mpi"])
@pytest.mark.parametrize("mpi_name", ["mpich", "openmpi"])
def test_fortran_hdf5_is_measured_and_tuned(tmp_path, fortran, mpi_name, binding):
    """Parallel HDF5 from Fortran (h5pfc -shlib), collective transfer: an HDF5 phase per open with the
    application's bytes of both ranks, and the MPI-IO hint applied under HDF5's opens."""
    exe = fortran("hdf5_fortran", mpi_name, binding, hdf5=True)
    mib = 4
    result = _run(mpi_name, [exe, tmp_path / "data.h5", mib], tmp_path, {"cb_buffer_size": "2M"})
    assert result.ok and "hdf5_fortran: ok" in result.stdout, result.stdout + result.stderr
    assert "warning" not in result.stderr, result.stderr
    report = result.report
    assert report.incomplete is None and report.run["ranks"] == 2 and report.run["hdf5_library"]
    total = 2 * mib << 20
    assert [(p["kind"], p["ranks"], p["bytes_written"], p["bytes_read"]) for p in report.phases] == [
        ("hdf5", 2, total, 0),
        ("hdf5", 2, 0, total),
    ]
    for phase in report.phases:
        (check,) = phase["settings"]
        assert (check["knob"], check["status"], check["effective"]) == ("cb_buffer_size", "applied", "2097152")


def test_a_job_whose_mpi_init_went_around_the_runtime_reports_incomplete(tmp_path):
    """MPI_Init and MPI_Finalize called through the MPI library's own handle: the runtime sees MPI only at
    MPI_File_open. The report says it is incomplete and holds rank 0's share only (no rank replaces another's
    report), with one warning for the job, shown again by `iotuner show`."""
    exe = tmp_path / "unseen_init"
    subprocess.run([MPICC, "-O1", str(PROGRAMS / "unseen_init.c"), "-o", str(exe), "-ldl"], check=True)
    share = 1 << 20
    result = run_job(mpi() + [exe, "libmpich.so.12", tmp_path / "data.bin", share], report=tmp_path / "r.json")
    assert result.ok and "unseen_init: ok" in result.stdout, result.stdout + result.stderr
    assert (tmp_path / "data.bin").stat().st_size == 2 * share
    warnings = [line for line in result.stderr.splitlines() if "warning" in line and "MPI_Init" in line]
    assert len(warnings) == 1, result.stderr
    report = result.report
    assert "incomplete" in report.incomplete and "rank 0's share of a 2-rank job" in report.incomplete
    assert report.run["mpi"] is False
    (phase,) = report.phases
    assert phase["kind"] == "mpiio" and phase["bytes_written"] == share  # one rank's, and said so
    assert not list(tmp_path.glob("r.json.tmp*"))
    shown = subprocess.run(
        [str(Path(os.sys.executable).parent / "iotuner"), "show", str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0 and "incomplete report" in flat(shown.stdout), shown.stdout + shown.stderr
    assert json.loads((tmp_path / "r.json").read_text())["incomplete"] == report.incomplete


def test_a_serial_program_with_mpi_loaded_is_not_incomplete(tmp_path, programs):
    """A program linked with MPI that never initializes it (a serial tool of a parallel HDF5) is serial:
    its report is whole, without the warning."""
    result = run_job([programs["serial_h5"], tmp_path / "g.h5"], report=tmp_path / "r.json")
    assert result.ok and "MPI_Init" not in result.stderr, result.stderr
    assert result.report.incomplete is None and result.report.phases


def test_the_mpi_library_s_own_io_inside_mpi_init_is_not_a_phase(tmp_path, programs):
    """A file the MPI library reads inside MPI_Init (MPICH 4.2's launcher topology file): its I/O, not the
    application's, so neither a phase nor in the totals. A shim preloaded after the runtime plays the MPI."""
    shim = tmp_path / "init_io_shim.so"
    subprocess.run(
        ["gcc", "-O1", "-shared", "-fPIC", str(PROGRAMS / "init_io_shim.c"), "-o", str(shim), "-ldl"], check=True
    )
    own = tmp_path / "hydra_hwloc_xmlfile_test"
    own.write_bytes(b"<topology/>" * 1000)
    out = tmp_path / "data.bin"
    env = dict(os.environ, LD_PRELOAD=str(shim), INIT_IO_FILE=str(own))
    result = run_job(
        mpi() + [programs["mpiio_write"], out, 4096, 4, "independent"], report=tmp_path / "r.json", env=env
    )
    assert result.ok, result.stderr
    assert result.stderr.count("init_io_shim: read 11000 bytes") == 2  # both ranks read it, inside MPI_Init
    report = result.report
    assert [p["file"] for p in report.phases] == [str(out)]
    assert report.totals["bytes_read"] == 0 and report.totals["bytes_written"] == 2 * 4 * 4096


@pytest.mark.parametrize("mode", ["collective", "pointer"])
def test_an_mpi_function_that_reaches_its_own_pmpi_one_is_counted_once(tmp_path, programs, mode):
    """MPI_x calling PMPI_x through the dynamic linker (a shim preloaded after the runtime plays such an MPI):
    the call passes two of the runtime's wrappers; the outer measures, the inner forwards, so the bytes, the
    calls and the run (MPI_Init, the report at MPI_Finalize) are there once."""
    shim = tmp_path / "mpi_to_pmpi_shim.so"
    subprocess.run(
        [MPICC, "-O1", "-shared", "-fPIC", str(PROGRAMS / "mpi_to_pmpi_shim.c"), "-o", str(shim)], check=True
    )
    out = tmp_path / "data.bin"
    block, count = 65536, 8
    env = dict(os.environ, LD_PRELOAD=str(shim))
    cfg = write_json(tmp_path / "s.json", {"version": 1, "mpiio": {"cb_buffer_size": "1M"}})
    result = run_job(
        mpi() + [programs["mpiio_write"], out, block, count, mode], config=cfg, report=tmp_path / "r.json", env=env
    )
    assert result.ok, result.stderr
    assert out.stat().st_size == 2 * block * count
    report = result.report
    assert report.run["mpi"] and report.run["ranks"] == 2 and report.incomplete is None
    (phase,) = report.phases
    assert (phase["kind"], phase["ranks"], phase["bytes_written"]) == ("mpiio", 2, 2 * block * count)
    assert phase["mpiio"]["write_calls"] == 2 * count
    assert [(c["knob"], c["status"]) for c in phase["settings"]] == [("cb_buffer_size", "applied")]


@pytest.mark.parametrize("mpi_name", ["mpich", "openmpi"])
def test_the_build_of_the_other_mpi_forwards_a_fortran_job_untouched(tmp_path, fortran, mpi_name):
    """A site preloading one build for every job: a Fortran job of the other MPI calls PMPI_ names, which the
    foreign-ABI trampolines forward to its own MPI; the job runs, one warning, no report."""
    exe = fortran("mpiio_fortran", mpi_name, "f08")
    other = native.runtime_library("openmpi" if mpi_name == "mpich" else None)
    if native.library_abi(other) == mpi_name:
        pytest.skip("no runtime built for the other MPI")
    env = dict(os.environ, **OMPI_ROOT, LD_PRELOAD=str(other), IOTUNER_REPORT=str(tmp_path / "r.json"))
    r = subprocess.run(
        [str(c) for c in _launch(mpi_name) + [exe, tmp_path / "data.bin", 2]],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and "mpiio_fortran: ok" in r.stdout, r.stdout + r.stderr
    warnings = [line for line in r.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "not the MPI libiotuner.so was built for" in warnings[0], r.stderr
    assert not (tmp_path / "r.json").exists()
