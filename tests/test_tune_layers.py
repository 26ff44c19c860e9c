"""`tune` searches only the layers the program uses: the dimensions of a layer the default's run report shows
unused (HDF5 for a pure MPI-IO program) are left out, and the header names them."""

import csv
import json
import subprocess
import sys

import pytest

from conftest import flat
from iotuner.tune import space as spaces


def _report(*phases, component="romio"):
    return {"run": {"mpi_io_component": component}, "phases": list(phases)}


def test_unused_layers_from_the_phases_a_report_holds():
    mpiio = {"kind": "mpiio", "mpi_hints": {"cb_nodes": "1"}}
    assert set(spaces.unused_layers(_report(mpiio))) == {"hdf5", "pnetcdf", "ompio"}
    h5_mpio = {"kind": "hdf5", "driver": "mpio", "mpi_hints": {}}
    assert set(spaces.unused_layers(_report(h5_mpio, component="ompio"))) == {"pnetcdf"}
    h5_sec2 = {"kind": "hdf5", "driver": "sec2"}
    assert set(spaces.unused_layers(_report(h5_sec2))) == {"pnetcdf", "mpiio", "ompio"}
    pnc = {"kind": "pnetcdf", "mpi_hints": {}}
    assert set(spaces.unused_layers(_report(pnc, component="ompio"))) == {"hdf5"}
    # no report, or one that saw no file: no evidence, nothing is left out
    assert spaces.unused_layers(None) == {} and spaces.unused_layers(_report()) == {}


def test_a_space_without_the_unused_layers():
    romio = spaces.romio()
    narrowed, dropped = romio.without_layers({"hdf5": "no HDF5 file was opened"})
    assert dropped == ["hdf5.transfer_mode", "hdf5.alignment", "collective_metadata"]
    assert [d.name for d in narrowed.dimensions] == [d.name for d in romio.dimensions[:6]]
    assert narrowed.size() * 2 * 3 * 2 == romio.size()
    assert not any(k.startswith("hdf5.") for d in narrowed.dimensions for k in d.knobs())
    # a space of unused layers only stays whole: there would be nothing to search
    ompio = spaces.ompio()
    assert ompio.without_layers({"ompio": "x", "hdf5": "y"}) == (ompio, [])
    # a joint dimension with a knob of a used layer stays
    h5evolve = spaces.h5evolve()
    assert "stripe_and_cb_size" not in h5evolve.without_layers({"mpiio": "x", "hdf5": "y"})[1]


@pytest.mark.mpi
@pytest.mark.parametrize("strategy", ["random", "auto"])
def test_tune_of_a_pure_mpiio_program_searches_no_hdf5_knob(tmp_path, programs, strategy):
    out = tmp_path / "out"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--space",
            "romio",
            "--strategy",
            strategy,
            "--trials",
            "5",
            "--repeats",
            "1",
            "--confirm-rounds",
            "1",
            "--confirm-top",
            "1",
            "--mpiexec",
            "mpiexec.mpich",
            "--out",
            str(out),
            "--",
            str(programs["mpiio_write"]),
            str(tmp_path / "d.bin"),
            "65536",
            "8",
            "collective",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    said = flat(r.stdout)
    assert (
        "space romio (6 of its 9 dimensions, 972 of 11,664 points; dropped hdf5.transfer_mode, hdf5.alignment, "
        "collective_metadata: the default's run report shows HDF5 not used (no HDF5 file was opened))"
    ) in said
    rows = [row for row in csv.DictReader(open(out / "trials.csv")) if row["kind"] != "default"]
    assert rows
    for row in rows:
        assert not any(k.startswith("hdf5.") and v for k, v in row.items()), row
        assert "hdf5." not in json.dumps(row)
