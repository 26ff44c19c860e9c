"""Every requested knob gets a row, in the report and in its settings table (docs/report.md, "Settings"):
applied, changed, dropped, not_applicable in the phases that it met; not_used and cannot_apply, in
settings.without_phase, for a knob no phase took: its layer's files never opened, or its library linked
statically into the program (out of a preloaded library's sight)."""

import io
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

import test_pnetcdf
from conftest import PROGRAMS, flat, mpi, run_job, write_json
from iotuner import render
from test_pnetcdf import _job as openmpi_job

# test_pnetcdf's fixtures, used here too (an import alone reads as unused to the linter, which removed it once)
pnetcdf_programs = test_pnetcdf.pnetcdf_programs
openmpi_env = test_pnetcdf.openmpi_env

# One HDF5 job meets each status a phase can give: alignment is applied; cb_nodes=2 without cb_config_list
# is capped at 1 aggregator on one node (changed); ROMIO's ufs driver drops striping hints; a Lustre layout
# on ext4 is not applicable; the PnetCDF hint has no PnetCDF file to act on.
DOC = {
    "version": 1,
    "hdf5": {"alignment": [1, "64K"]},
    "mpiio": {"cb_nodes": 2, "striping_factor": 4},
    "lustre": {"stripe_count": 2},
    "pnetcdf": {"nc_var_align_size": "1M"},
}


def _rows(report) -> dict[str, tuple]:
    """'layer.knob' -> (statuses over the phases, reasons), with the rows without a phase."""
    rows: dict[str, tuple[set, set]] = {}
    for c in report.checks() + report.without_phase():
        st, why = rows.setdefault(f"{c['layer']}.{c['knob']}", (set(), set()))
        st.add(c["status"])
        why.add(c["reason"] or "")
    return rows


def _table(report) -> str:
    out = io.StringIO()
    render.print_report(report, Console(file=out, width=240, highlight=False))
    return flat(out.getvalue())


@pytest.fixture(scope="module")
def hdf5_job(programs, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rows")
    cfg = write_json(tmp / "s.json", DOC)
    result = run_job(mpi() + [programs["ior_hdf5"], tmp, 1, 1, "collective"], config=cfg, report=tmp / "r.json")
    assert result.ok, result.stderr
    return result.report


def test_every_requested_knob_has_a_row(hdf5_job):
    requested = {f"{layer}.{knob}" for layer, knobs in DOC.items() if layer != "version" for knob in knobs}
    assert set(_rows(hdf5_job)) == requested
    table = _table(hdf5_job)
    for knob in requested:
        assert knob in table


@pytest.mark.parametrize(
    "knob, status, why",
    [
        ("hdf5.alignment", "applied", ""),
        ("mpiio.cb_nodes", "changed", "capped at 1"),
        ("mpiio.striping_factor", "dropped", "ignores striping hints"),
        ("lustre.stripe_count", "not_applicable", "not Lustre"),
    ],
)
def test_a_phase_row_of_each_status(hdf5_job, knob, status, why):
    statuses, reasons = _rows(hdf5_job)[knob]
    assert statuses == {status}
    assert any(why in r for r in reasons), reasons
    assert knob not in {f"{c['layer']}.{c['knob']}" for c in hdf5_job.without_phase()}


def test_a_pnetcdf_knob_in_an_hdf5_program_is_not_used(hdf5_job):
    (row,) = hdf5_job.without_phase()
    assert (row["layer"], row["knob"], row["requested"], row["effective"], row["status"], row["reason"]) == (
        "pnetcdf",
        "nc_var_align_size",
        "1048576",
        None,
        "not_used",
        "the job opened no PnetCDF file",
    )
    assert "- pnetcdf.nc_var_align_size 1048576 - not used the job opened no PnetCDF file" in _table(hdf5_job)


def test_a_file_pattern_that_matched_nothing_is_named(programs, tmp_path):
    cfg = write_json(
        tmp_path / "s.json", {"version": 1, "groups": [{"file": "nothing*.h5", "hdf5": {"sieve_buf_size": "1M"}}]}
    )
    result = run_job(mpi() + [programs["ior_hdf5"], tmp_path, 1, 1], config=cfg, report=tmp_path / "r.json")
    assert result.ok, result.stderr
    assert [(c["knob"], c["status"], c["reason"]) for c in result.report.without_phase()] == [
        ("sieve_buf_size", "not_used", "no file or dataset of the job matched 'nothing*.h5'")
    ]


def test_an_hdf5_knob_in_a_pnetcdf_program_is_not_used(tmp_path, pnetcdf_programs, openmpi_env):
    cfg = write_json(
        tmp_path / "s.json", {"version": 1, "hdf5": {"alignment": [1, "1M"]}, "pnetcdf": {"nc_var_align_size": "4K"}}
    )
    result = run_job(
        openmpi_job(pnetcdf_programs["pnetcdf_rw"], tmp_path / "f.nc"),
        config=cfg,
        report=tmp_path / "r.json",
        timeout=120,
    )
    assert result.ok, result.stderr
    assert [(c["layer"], c["knob"], c["status"], c["reason"]) for c in result.report.without_phase()] == [
        ("hdf5", "alignment", "not_used", "the job opened no HDF5 file")
    ]
    assert _rows(result.report)["pnetcdf.nc_var_align_size"][0] >= {"applied"}


def static_hdf5_build(source: Path, out: Path, compiler: str = "h5pcc.mpich", *flags: str) -> Path:
    """A program built as sites build it: h5pcc / h5pfc link HDF5 statically by default."""
    if not shutil.which(compiler):
        pytest.skip(f"needs {compiler}")
    subprocess.run(
        [compiler, "-O1", str(source), "-o", str(out), *flags], check=True, capture_output=True, cwd=out.parent
    )  # h5pcc leaves its object file in the working directory
    symbols = subprocess.run(["nm", str(out)], check=True, capture_output=True, text=True).stdout
    assert " T H5Fcreate\n" in symbols  # HDF5 is in the program itself
    return out


@pytest.mark.mpi
def test_hdf5_linked_statically_cannot_apply_and_names_the_fix(tmp_path):
    exe = static_hdf5_build(PROGRAMS / "ior_hdf5.c", tmp_path / "ior_static")
    cfg = write_json(
        tmp_path / "s.json",
        {"version": 1, "hdf5": {"alignment": [1, "1M"], "sieve_buf_size": "1M"}, "mpiio": {"romio_cb_write": "enable"}},
    )
    result = run_job(mpi() + [exe, tmp_path, 1, 1, "collective"], config=cfg, report=tmp_path / "r.json")
    assert result.ok, result.stderr
    rows = result.report.without_phase()
    why = "HDF5 is linked statically into ior_static; link with `iotuner link-flags`"
    assert [(c["knob"], c["status"], c["reason"]) for c in rows] == [
        ("alignment", "cannot_apply", why),
        ("sieve_buf_size", "cannot_apply", why),
    ]
    # HDF5's own MPI_File_open is still seen: the MPI-IO hint applies to its file
    assert _rows(result.report)["mpiio.romio_cb_write"][0] == {"applied"}
    table = _table(result.report)
    assert "HDF5: linked statically" in table and "cannot apply " + why in table


# ---- `iotuner link-flags`: the same programs, linked so that iotuner sees their static HDF5 ----

LINK_DOC = {
    "version": 1,
    "hdf5": {"alignment": [1, "1M"], "sieve_buf_size": "1M"},
    "mpiio": {"romio_cb_write": "enable"},
}


def _link_flags(abi: str | None = None) -> list[str]:
    from iotuner.commands import link_flags

    return link_flags.flags(abi)


def _summary(report) -> tuple:
    """What a build of the program must not change: the phases' kinds, ranks and bytes, and the settings'
    outcomes."""
    phases = [
        (
            p["kind"],
            p["ranks"],
            p["bytes_written"],
            p["bytes_read"],
            p["hdf5"]["bytes_written"],
            p["hdf5"]["bytes_read"],
        )
        for p in report.phases
    ]
    settings = sorted({(c["layer"], c["knob"], c["requested"], c["effective"], c["status"]) for c in report.checks()})
    return phases, settings


# Debian's mpif90.openmpi leaves out Open MPI's library directory (docs/machine.md): -lmpi must not find MPICH's
OPENMPI_LIB = "-L/usr/lib/x86_64-linux-gnu/openmpi/lib"


@pytest.mark.mpi
@pytest.mark.parametrize(
    "source, compiler, args, abi",
    [
        ("ior_hdf5.c", "h5pcc.mpich", ["{dir}", 1, 1, "collective"], None),
        ("h5_fortran.f90", "h5pfc.mpich", ["{dir}/f.h5", 65536], None),
        ("h5_fortran.f90", "h5pfc.openmpi", ["{dir}/f.h5", 65536], "openmpi"),
    ],
)
def test_link_flags_let_iotuner_tune_a_static_hdf5_program(tmp_path, source, compiler, args, abi, monkeypatch):
    """A C and a Fortran program built with h5pcc / h5pfc's static default (the Fortran one with Open MPI's
    too): with `iotuner link-flags` on the link line, the hdf5 knobs are applied and read back, and the phases
    and settings are those of the same program built against the shared HDF5; without them every hdf5 knob is
    'cannot apply'; and the linked program still runs without iotuner."""
    extra = [OPENMPI_LIB] if abi == "openmpi" else []
    if abi == "openmpi":
        from iotuner import native

        if native.library_abi(native.runtime_library("openmpi")) != "openmpi":
            pytest.skip("no runtime built for Open MPI")
        for k, v in {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}.items():
            monkeypatch.setenv(k, v)
    launch = ["mpirun.openmpi", "-n", "2"] if abi == "openmpi" else mpi()
    static = static_hdf5_build(PROGRAMS / source, tmp_path / "static", compiler, *extra)
    linked = static_hdf5_build(PROGRAMS / source, tmp_path / "linked", compiler, *_link_flags(abi), *extra)
    shared = tmp_path / "shared"
    subprocess.run(
        [compiler, "-shlib", "-O1", str(PROGRAMS / source), "-o", str(shared), *extra],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    cfg = write_json(tmp_path / "s.json", LINK_DOC)
    reports = {}
    for exe in (static, linked, shared):
        out = tmp_path / f"{exe.name}.out"
        out.mkdir()
        argv = [str(a).format(dir=out) for a in args]
        result = run_job(launch + [exe, *argv], config=cfg, report=out / "r.json")
        assert result.ok, result.stderr
        assert result.report.run["ranks"] == 2
        reports[exe.name] = result.report
    assert [(c["knob"], c["status"]) for c in reports["static"].without_phase()] == [
        ("alignment", "cannot_apply"),
        ("sieve_buf_size", "cannot_apply"),
    ]
    assert reports["linked"].without_phase() == [] and reports["linked"].run["hdf5_library"]
    linked_summary = _summary(reports["linked"])
    assert linked_summary == _summary(reports["shared"])
    assert ("hdf5", "alignment", "1,1048576", "1,1048576", "applied") in linked_summary[1]
    assert ("hdf5", "sieve_buf_size", "1048576", "1048576", "applied") in linked_summary[1]
    # without iotuner in the process, the calls go straight to HDF5
    plain = subprocess.run(
        launch + [str(linked), *[str(a).format(dir=tmp_path) for a in args]],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert plain.returncode == 0, plain.stderr


def test_link_flags_name_the_wrapped_calls_and_the_archive():
    flags = _link_flags()
    assert "-Wl,--wrap=H5Fcreate" in flags and "-Wl,--wrap=H5Dwrite" in flags and flags[-1] == "-liotuner_link"
    lib = Path(next(f for f in flags if f.startswith("-L"))[2:])
    assert (lib / "libiotuner_link.a").exists()
    symbols = subprocess.run(["nm", str(lib / "libiotuner_link.a")], check=True, capture_output=True, text=True).stdout
    for f in flags:  # every wrapped call has its __wrap_ entry point
        if f.startswith("-Wl,--wrap="):
            assert f" T __wrap_{f.split('=', 1)[1]}\n" in symbols, f


def test_pnetcdf_linked_statically_cannot_apply(tmp_path, openmpi_env):
    """PnetCDF inside the program (libpnetcdf.a): its knobs cannot apply, and the reason says how to link; the
    MPI-IO hints still reach the file through PnetCDF's own MPI_File_open."""
    archive = Path("/usr/lib/x86_64-linux-gnu/libpnetcdf.a")
    if not (shutil.which("mpicc.openmpi") and archive.exists()):
        pytest.skip("needs Open MPI and Debian's libpnetcdf.a")
    exe = tmp_path / "pnetcdf_static"
    subprocess.run(
        ["mpicc.openmpi", "-O1", str(PROGRAMS / "pnetcdf_rw.c"), "-o", str(exe), str(archive), "-lm"], check=True
    )
    cfg = write_json(
        tmp_path / "s.json", {"version": 1, "pnetcdf": {"nc_var_align_size": "4K"}, "mpiio": {"cb_buffer_size": "8M"}}
    )
    result = run_job(openmpi_job(exe, tmp_path / "f.nc"), config=cfg, report=tmp_path / "r.json", timeout=120)
    assert result.ok, result.stderr
    assert [(c["knob"], c["status"], c["reason"]) for c in result.report.without_phase()] == [
        (
            "nc_var_align_size",
            "cannot_apply",
            "PnetCDF is linked statically into pnetcdf_static; link it as a shared library (-lpnetcdf)",
        )
    ]
    assert _rows(result.report)["mpiio.cb_buffer_size"][0] == {"applied"}
