"""A module from outside the library (tests/programs/toy_module.c), built only against the installed public
interface (pkg-config iotuner: <iotuner/module.h>, -liotuner_core) and preloaded after libiotuner.so, hears
every event of a 2-rank run and adds its own section to the run report."""

from __future__ import annotations

import os
import subprocess

import pytest

from conftest import MPICC, PROGRAMS, RANKS, mpi, run_job
from iotuner import native

BLOCK = 1 << 20
EVENTS = ("phase_begin", "file_open", "call", "data", "operation", "phase_end", "phase_dropped")


@pytest.fixture(scope="module")
def toy_module(tmp_path_factory):
    out = tmp_path_factory.mktemp("toy") / "libtoy.so"
    env = dict(os.environ, PKG_CONFIG_PATH=str(native.lib_dir() / "pkgconfig"))
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "iotuner"], env=env, check=True, capture_output=True, text=True
    ).stdout.split()
    subprocess.run(
        [
            MPICC,
            "-shared",
            "-fPIC",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O1",
            str(PROGRAMS / "toy_module.c"),
            "-o",
            str(out),
            *flags,
            f"-Wl,-rpath,{native.lib_dir()}",
        ],
        check=True,
    )
    return out


@pytest.mark.mpi
def test_a_module_from_outside_hears_every_event_and_writes_its_section(programs, toy_module, tmp_path):
    res = run_job(
        [*mpi(), programs["module_events"], tmp_path, BLOCK],
        report=tmp_path / "report.json",
        env=dict(os.environ, LD_PRELOAD=str(toy_module)),
        count_ops=True,
    )
    assert res.returncode == 0, res.stderr
    assert res.report is not None, res.report_error  # the toy's section is valid in a report
    doc = res.report.data
    assert res.report.section_version("toy") == 3  # its section's own version, beside the library's modules'
    assert {"posix", "mpiio", "hdf5", "toy"} <= set(doc["sections"])
    ranks = doc["toy"]["ranks"]
    assert [r["rank"] for r in ranks] == list(range(RANKS))
    report_phases = {p["id"]: p for p in doc["phases"]}
    for r in ranks:
        where = f"rank {r['rank']}: {r}"
        # two files opened and closed, two opens that failed (one per layer): a begin and a file open for each
        assert (r["phase_begin"], r["file_open"], r["phase_end"], r["phase_dropped"]) == (4, 4, 2, 2), where
        assert r["out_of_order"] == 0, where  # no event before its phase's begin and file open, nor after its end
        assert r["call"] >= 2 and r["data"] >= 2 and r["operation"] >= 1, where  # H5Dcreate, H5Dwrite; MPI-IO
        seen = {p["kind"]: p for p in r["phases"]}
        assert set(seen) == {"hdf5", "mpiio"}, where
        assert seen["mpiio"]["file"] == str(tmp_path / "events.bin")
        assert seen["mpiio"]["bytes"] == BLOCK  # the MPI-IO file: exactly the rank's block
        assert seen["hdf5"]["file"] == str(tmp_path / "events.h5")
        assert seen["hdf5"]["bytes"] >= BLOCK  # HDF5's MPI-IO calls: the block and some metadata
        for p in seen.values():  # the report context maps the module's phase to the report's
            assert report_phases[p["phase"]]["file"] == p["file"], where
            assert report_phases[p["phase"]]["kind"] == p["kind"], where
