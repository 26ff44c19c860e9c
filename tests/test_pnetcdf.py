"""PnetCDF and parallel netCDF-4 under iotuner run: Debian builds both against Open MPI, so these run with
mpirun.openmpi and the runtime built for Open MPI (lib/openmpi/libiotuner.so).

The PnetCDF module (native/src/runtime/pnetcdf.c) makes a file opened with ncmpi_create / ncmpi_open one phase
of its own kind, counted at the PnetCDF level (every put and get, blocking or posted); netCDF-4 files are HDF5
files underneath, which the HDF5 module measures.
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import write_json
from iotuner import native, runner

PROGRAMS = Path(__file__).parent / "programs"
INCLUDE = Path(__file__).parent.parent / "native" / "include"
OMPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# pnetcdf_rw per rank: 1000 doubles + 1000 ints (two iputs) + 1000 floats (flexible API) + 4 floats (an
# iput of its own), and 1000 shorts in independent data mode with "indep"
PER_RANK = 1000 * 8 + 1000 * 4 + 1000 * 4 + 4 * 4
INDEP = 1000 * 2


def _needs_pnetcdf():
    if not (shutil.which("mpicc.openmpi") and shutil.which("mpirun.openmpi")):
        pytest.skip("needs Open MPI (scripts/setup.sh installs it)")
    if (
        not Path("/usr/include/pnetcdf.h").exists()
        and subprocess.run(["pkg-config", "--exists", "pnetcdf"]).returncode != 0
    ):
        pytest.skip("needs PnetCDF (libpnetcdf-dev; scripts/setup.sh installs it)")
    if native.library_abi(native.runtime_library("openmpi")) != "openmpi":
        pytest.skip("no runtime built for Open MPI")


def _pnetcdf_soname() -> str:
    lib = next(
        Path(p) for p in ("/usr/lib/x86_64-linux-gnu/libpnetcdf.so", "/usr/lib/libpnetcdf.so") if Path(p).exists()
    )
    dynamic = subprocess.run(["objdump", "-p", str(lib)], capture_output=True, text=True).stdout
    return next((line.split()[-1] for line in dynamic.splitlines() if line.split()[:1] == ["SONAME"]), lib.name)


def _pnetcdf_version() -> str:
    return subprocess.run(["pkg-config", "--modversion", "pnetcdf"], capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def pnetcdf_programs(tmp_path_factory) -> dict[str, Path]:
    _needs_pnetcdf()
    out = tmp_path_factory.mktemp("pnetcdf")
    built = {}
    # pnetcdf_late dlopens the library by its soname: libpnetcdf.so.0d in PnetCDF 1.12, libpnetcdf.so.6 in 1.14
    soname = f'-DPNETCDF_SONAME="{_pnetcdf_soname()}"'
    for name, libs in (
        ("pnetcdf_rw", ["-lpnetcdf"]),
        ("pnetcdf_cmp", ["-lpnetcdf"]),
        ("pnetcdf_late", ["-ldl", soname]),
    ):
        built[name] = out / name
        subprocess.run(
            ["mpicc.openmpi", "-O1", "-Wall", str(PROGRAMS / f"{name}.c"), "-o", str(built[name]), *libs], check=True
        )
    return built


@pytest.fixture
def openmpi_env(monkeypatch):
    for k, v in OMPI_ROOT.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("PNETCDF_HINTS", raising=False)


def _job(*args) -> list[str]:
    return ["mpirun.openmpi", "-n", "2", *map(str, args)]


def _same(cmp: Path, a: Path, b: Path) -> bool:
    r = subprocess.run(
        ["mpirun.openmpi", "-n", "1", str(cmp), str(a), str(b)], capture_output=True, text=True, timeout=60
    )
    return r.returncode == 0 and "pnetcdf_cmp: same" in r.stdout


def test_the_call_table_has_pnetcdfs_prototypes():
    """The wrappers are declared from the table (the library does not include pnetcdf.h, whose MPI is another
    build's): compiled against pnetcdf.h, every row must match PnetCDF's own prototype, and the table must
    hold every put / get call libpnetcdf exports but the ones it leaves out on purpose (vard: an MPI file type;
    attributes are header data)."""
    _needs_pnetcdf()
    rows = (
        '#include <pnetcdf.h>\n#include "iotuner/calls.h"\n#define D(ret, name, params, ...) ret name params;\n'
        "IOT_PNETCDF_CALLS(D)\nIOT_PNETCDF_MPI_CALLS(D)\n"
    )
    r = subprocess.run(
        ["mpicc.openmpi", "-fsyntax-only", "-Werror", "-x", "c", "-I", str(INCLUDE), "-"],
        input=rows,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    names = subprocess.run(
        ["cc", "-E", "-P", "-x", "c", "-I", str(INCLUDE), "-"],
        check=True,
        capture_output=True,
        text=True,
        input='#include "iotuner/calls.h"\n#define N(ret, name, ...) name\nIOT_PNETCDF_DATA_CALLS(N, N)\n',
    ).stdout.split()
    lib = next(
        Path(p) for p in ("/usr/lib/x86_64-linux-gnu/libpnetcdf.so", "/usr/lib/libpnetcdf.so") if Path(p).exists()
    )
    exported = {
        line.split()[-1]
        for line in subprocess.run(
            ["nm", "-D", "--defined-only", str(lib)], check=True, capture_output=True, text=True
        ).stdout.splitlines()
    }
    data_calls = {
        n for n in exported if n.startswith("ncmpi_") and n.split("_")[1] in ("put", "get", "iput", "iget", "bput")
    }
    left_out = {n for n in data_calls if "_att" in n or "_vard" in n or n == "ncmpi_get_file_info"}
    assert set(names) == data_calls - left_out and len(names) == 546


@pytest.mark.mpi
def test_a_pnetcdf_program_is_measured_and_tuned(tmp_path, pnetcdf_programs, openmpi_env):
    """2 ranks write and read back one file: blocking puts and gets, iputs and igets with ncmpi_wait_all, the
    flexible API, and independent data mode (PnetCDF's second MPI file handle, opened by ncmpi_begin_indep_data,
    joins the file's phase: no MPI-IO phase of its own, nothing counted twice). A write phase and a read phase
    of PnetCDF's kind with every byte once; nc_var_align_size applied and read back over the application's own
    512 (as PnetCDF used it, after enddef), not applicable to the file opened for reading; the data as an
    untuned run writes it."""
    exe, cmp = pnetcdf_programs["pnetcdf_rw"], pnetcdf_programs["pnetcdf_cmp"]
    plain = subprocess.run(
        _job(exe, tmp_path / "plain.nc", "indep", "hints"), capture_output=True, text=True, timeout=120
    )
    assert plain.returncode == 0 and "pnetcdf_rw: ok" in plain.stdout, plain.stderr
    cfg = write_json(tmp_path / "s.json", {"version": 1, "pnetcdf": {"nc_var_align_size": "4K", "nc_ibuf_size": "1M"}})
    result = runner.run(
        _job(exe, tmp_path / "tuned.nc", "indep", "hints"),
        config=cfg,
        report=tmp_path / "r.json",
        capture=True,
        timeout=120,
    )
    assert result.ok and "pnetcdf_rw: ok" in result.stdout, result.stdout + result.stderr
    assert "nc_var_align_size=4096" in result.stdout  # what the program itself reads back
    assert "warning" not in result.stderr, result.stderr
    report = result.report
    assert report.data["run"]["pnetcdf_library"] == _pnetcdf_version()  # 1.12.3 on Debian 12, 1.14.0 on 13
    written = 2 * (PER_RANK + INDEP)
    phases = [(p["kind"], p["ranks"], p["data_level"], p["bytes_written"], p["bytes_read"]) for p in report.phases]
    assert phases == [("pnetcdf", 2, "pnetcdf", written, 0), ("pnetcdf", 2, "pnetcdf", 0, written)]
    write, read = report.phases
    # per rank: put_vara_double_all, 2 iputs, put_vara_all, an iput, put_vara_short (independent)
    assert write["pnetcdf"]["write_calls"] == 2 * 6 and read["pnetcdf"]["read_calls"] == 2 * 5
    assert write["pnetcdf"]["write_time_s"] > 0 and read["pnetcdf"]["read_time_s"] > 0  # the waits' time too
    assert write["mpiio"]["bytes_written"] >= written  # the header too, and both MPI file handles' data
    checks = {
        (p, c["knob"]): (c["requested"], c["effective"], c["status"])
        for p, ph in enumerate(report.phases)
        for c in ph["settings"]
    }
    assert checks[0, "nc_var_align_size"] == ("4096", "4096", "applied")
    assert checks[0, "nc_ibuf_size"] == checks[1, "nc_ibuf_size"] == ("1048576", "1048576", "applied")
    assert checks[1, "nc_var_align_size"][2] == "not_applicable"
    assert write["application_settings"] == {"pnetcdf.nc_var_align_size": "512"}  # the program's own hint
    assert not any(k.startswith("mpiio.nc_") for k in write["application_settings"])
    assert _same(cmp, tmp_path / "plain.nc", tmp_path / "tuned.nc")


@pytest.mark.mpi
def test_pnetcdf_hints_from_the_environment_win_and_are_named(tmp_path, pnetcdf_programs, openmpi_env, monkeypatch):
    """PnetCDF prefers PNETCDF_HINTS to the MPI_Info: the requested value is reported changed, with why."""
    monkeypatch.setenv("PNETCDF_HINTS", "nc_var_align_size=1024")
    cfg = write_json(tmp_path / "s.json", {"version": 1, "pnetcdf": {"nc_var_align_size": "4K"}})
    result = runner.run(
        _job(pnetcdf_programs["pnetcdf_rw"], tmp_path / "f.nc"),
        config=cfg,
        report=tmp_path / "r.json",
        capture=True,
        timeout=120,
    )
    assert result.ok, result.stdout + result.stderr
    [check] = [c for c in result.report.phases[0]["settings"] if c["knob"] == "nc_var_align_size"]
    assert (check["effective"], check["status"]) == ("1024", "changed")
    assert "PNETCDF_HINTS" in check["reason"]
    assert result.report.data["run"]["hint_sources"]["PNETCDF_HINTS"] == "nc_var_align_size=1024"


@pytest.mark.mpi
def test_the_mpich_build_leaves_a_pnetcdf_job_untouched(tmp_path, pnetcdf_programs, openmpi_env):
    """PnetCDF's calls with MPI handles (ncmpi_create's communicator and info, the flexible API's datatype) go
    through trampolines: the MPICH build preloaded into this Open MPI job forwards them untouched, also when the
    program loads PnetCDF itself after MPI_Init (the trampolines find PnetCDF at their first call)."""
    env = dict(runner.environment(None, tmp_path / "r.json"), **OMPI_ROOT)  # no command: the main (MPICH) build
    assert native.library_abi(Path(env["LD_PRELOAD"])) == "mpich"
    for args, ok in (
        ([pnetcdf_programs["pnetcdf_rw"], tmp_path / "a.nc", "indep"], "pnetcdf_rw: ok"),
        ([pnetcdf_programs["pnetcdf_late"], tmp_path / "b.nc"], "pnetcdf_late: ok"),
    ):
        r = subprocess.run(_job(*args), env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and ok in r.stdout, r.stdout + r.stderr
        assert r.stderr.count("iotuner: warning") == 1 and "built for (MPICH)" in r.stderr
    assert not (tmp_path / "r.json").exists()


def _e3smio(name: str) -> Path:
    if name not in native.bundled_kernels("openmpi"):
        pytest.skip(f"{name} was not built (needs PnetCDF / netCDF-MPI and Open MPI at build time)")
    return native.executable(name, "openmpi")


# e3smio -c 4096 -l 8 -s 16 -u 8: per step 4096 columns x (16 surface fields x 8 bytes + 8 upper-air fields x
# 8 levels x 4 bytes); 64 blocks of 64 columns dealt to 2 ranks
E3SM = ["-c", "4096", "-l", "8", "-d", "64", "-t", "2"]
E3SM_BYTES = 2 * 4096 * (16 * 8 + 8 * 8 * 4)
E3SM_POSTS = 2 * 24 * 64  # steps x fields x blocks (of both ranks)


@pytest.mark.mpi
@pytest.mark.parametrize("mode", ["collective", "independent"])
def test_the_e3sm_kernel_through_pnetcdf(tmp_path, openmpi_env, mode):
    """e3smio posts one iput per block and field and waits once per step (collective: ncmpi_wait_all;
    independent: ncmpi_wait in independent data mode, PnetCDF's second handle): every byte once at the PnetCDF
    level, counted when posted, timed at the wait."""
    exe = _e3smio("e3smio")
    result = runner.run(
        _job(exe, *E3SM, "-m", mode, "-r", "-o", tmp_path), report=tmp_path / "r.json", capture=True, timeout=180
    )
    assert result.ok and "e3smio verify: ok" in result.stdout, result.stdout + result.stderr
    write, read = result.report.phases
    assert (write["kind"], write["bytes_written"], read["bytes_read"]) == ("pnetcdf", E3SM_BYTES, E3SM_BYTES)
    assert write["pnetcdf"]["write_calls"] == read["pnetcdf"]["read_calls"] == E3SM_POSTS
    assert write["pnetcdf"]["write_time_s"] > 0 and read["pnetcdf"]["read_time_s"] > 0
    assert write["posix"]["bytes_written"] >= E3SM_BYTES  # OMPIO's pwritev calls too


@pytest.mark.mpi
def test_the_e3sm_kernel_through_netcdf4_is_measured_by_the_hdf5_module(tmp_path, openmpi_env):
    """Parallel netCDF-4 (nc_create_par) is HDF5 underneath: the write and the read are HDF5 phases with every
    byte once (netCDF-4 opens its variables with H5Oopen and keeps them with H5Iinc_ref), and netCDF's look at
    the file's first bytes before H5Fopen (with MPI-IO: 8 bytes per rank) is an MPI-IO phase of its own."""
    exe = _e3smio("e3smio_nc4")
    result = runner.run(_job(exe, *E3SM, "-r", "-o", tmp_path), report=tmp_path / "r.json", capture=True, timeout=180)
    assert result.ok and "e3smio_nc4 verify: ok" in result.stdout, result.stdout + result.stderr
    phases = [(p["kind"], p["ranks"], p["bytes_written"], p["bytes_read"]) for p in result.report.phases]
    # netCDF 4.9.0 reads the first bytes through MPI-IO; 4.9.3 with POSIX calls first, then through MPI-IO
    # (4.9.1-4.9.2 untested)
    version = subprocess.run(["pkg-config", "--modversion", "netcdf-mpi"], capture_output=True, text=True).stdout
    looks = [("mpiio", 2, 0, 16)]
    if tuple(int(x) for x in re.findall(r"\d+", version)[:3]) >= (4, 9, 3):
        looks = [("posix", 2, 0, 16), *looks]
    assert phases == [("hdf5", 2, E3SM_BYTES, 0), *looks, ("hdf5", 2, 0, E3SM_BYTES)]
    write, read = result.report.phases[0], result.report.phases[-1]
    # a dataset per field, written box by box (empty boxes included: collective access needs every rank)
    assert write["hdf5"]["dataset_writes"] == read["hdf5"]["dataset_reads"] == E3SM_POSTS


@pytest.mark.mpi
def test_smart_mode_sees_the_pnetcdf_calls(tmp_path, openmpi_env):
    """The insights of a PnetCDF phase come from PnetCDF's calls: the posted puts are its write calls, and the
    MPI-IO writes their wait makes are its transfers; the header PnetCDF writes at enddef is not."""
    exe = _e3smio("e3smio")
    env = dict(os.environ, IOTUNER_SMART="1")
    result = runner.run(
        _job(exe, *E3SM, "-F", "-o", tmp_path), report=tmp_path / "r.json", capture=True, timeout=180, env=env
    )
    assert result.ok, result.stdout + result.stderr
    learned = result.report.data["smart"]["phases"][0]
    assert learned["role"] == "learn" and learned["identity"].endswith("/e3smio_#.nc")
    insights = learned["insights"]
    assert insights["write_calls"] == E3SM_POSTS // 2  # one step's file
    # the raw-data MPI-IO writes: the step's fields (collective), and the record count rank 0 updates inside the
    # wait (8 bytes, independent: so the transfers are "mixed" on that rank's word, never "independent")
    assert E3SM_BYTES // 2 <= insights["bytes_written"] <= E3SM_BYTES // 2 + 8
    assert insights["write_transfer"] in ("collective", "mixed") and insights["files"] == "shared"
    assert insights["transfer_size"] >= E3SM_BYTES // 2 // 2  # one collective write per rank, not the puts


@pytest.mark.mpi
def test_smart_mode_applies_no_hdf5_rule_to_a_pnetcdf_file_and_names_what_did_not_act(tmp_path, openmpi_env):
    """The default rules on a PnetCDF file: the HDF5 rules (alignment, metadata cache) fire but set nothing,
    saying why; a phase is `optimized` only when one of its settings took effect. Under OMPIO the rules' ROMIO
    hint is dropped, so every recurrence is `unchanged`, with the dropped knob named, and is not judged."""
    exe = _e3smio("e3smio")
    env = dict(os.environ, IOTUNER_SMART="1")
    result = runner.run(
        _job(exe, *E3SM[:-2], "-t", "4", "-F", "-o", tmp_path),
        report=tmp_path / "r.json",
        capture=True,
        timeout=180,
        env=env,
    )
    assert result.ok, result.stdout + result.stderr
    phases = result.report.data["smart"]["phases"]
    learned = phases[0]
    assert learned["role"] == "learn" and learned["insights"]["library"] == "pnetcdf"
    fired = {f["rule"]: f for f in learned["rules"]["fired"]}
    assert not any(k.startswith("hdf5.") for k in learned["rules"]["settings"])
    for rule in (4, 5):  # transfers below 16M: they fire on the insights, and set nothing on this file
        assert fired[rule]["set"] == {} and list(fired[rule]["not_set"])[0].startswith("hdf5.")
        assert "(a PnetCDF file)" in fired[rule]["reason"]
    assert len(phases) == 4
    for p in phases[1:]:
        assert not any(c["knob"].startswith("hdf5.") for c in p["settings"]), p
        took = [c for c in p["settings"] if c["status"] in ("applied", "changed")]
        assert (p["role"] == "optimized") == bool(took), p
        if p["role"] == "unchanged":
            assert p["feedback"].startswith("none of its settings took effect (") and "dropped" in p["feedback"]
    assert {p["role"] for p in phases[1:]} == {"unchanged"}  # OMPIO drops cb_config_list, the only setting


@pytest.mark.mpi
@pytest.mark.slow
def test_tune_on_the_pnetcdf_kernel(tmp_path, openmpi_env):
    """A short `iotuner tune --space pnetcdf` study on e3smio: the trials run (their PnetCDF hints and OMPIO
    knobs applied: the effective settings are read back), the study completes and writes best.json. No
    harmful baseline exists here: no PnetCDF hint or OMPIO knob measured 2x slower than the defaults on this
    kernel, interleaved (docs/tuning.md), so no gain is claimed."""
    _e3smio("e3smio")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "iotuner",
                "tune",
                "--space",
                "pnetcdf",
                "--mpiexec",
                "mpirun.openmpi",
                "--trials",
                "6",
                "--strategy",
                "random",
                "--objective",
                "write-bw",
                "--study",
                "pnetcdf",
                "--out",
                tmp_path / "out",
                "--scratch",
                scratch,
                "--",
                "e3smio",
                *E3SM,
                "-o",
                "{scratch}",
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
    assert r.returncode == 0, r.stderr + r.stdout[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["trials_run"] == 6
    best = json.loads((tmp_path / "out" / "best.json").read_text())
    assert best["version"] == 1
    rows = [row for row in csv.DictReader(open(tmp_path / "out" / "trials.csv")) if row["kind"] == "trial"]
    assert len(rows) == 6 and all(row["state"] == "COMPLETE" for row in rows)
    effective = [json.loads(row["effective"]) for row in rows]
    assert any(k.startswith("pnetcdf.") for e in effective for k in e)
