"""Serial (non-MPI) programs get their HDF5 knobs and a report; MPI knobs
are reported as not applicable."""

import pytest

from conftest import run_job, write_json

SETTINGS = {
    "version": 1,
    "hdf5": {
        "alignment": [0, 4096],
        "sieve_buf_size": "128K",
        "coll_metadata_writes": True,
        "transfer_mode": "collective",
        "chunk_dims": [16, 1000],
    },
    "mpiio": {"romio_cb_write": "enable"},
}


@pytest.mark.parametrize("program", ["serial_h5", "serial_h5_serialhdf5"])
def test_serial_hdf5_program(tmp_path, programs, program):
    if program not in programs:
        pytest.skip("Debian's serial HDF5 (libhdf5_serial.so.103) is not installed")
    cfg = write_json(tmp_path / "s.json", SETTINGS)
    result = run_job([programs[program], tmp_path / "grid.h5"], config=cfg)
    assert result.ok, result.stderr
    assert "serial_h5: ok" in result.stdout
    rep = result.report
    assert rep.run["mpi"] is False and rep.run["ranks"] == 1
    write, read = rep.data_phases()
    assert write["driver"] == read["driver"] == "sec2"
    assert write["bytes_written"] == 120 * 250 * 4 and write["bytes_read"] == 0  # the data, at H5Dwrite
    assert read["bytes_read"] == 120 * 250 * 4 and read["bytes_written"] == 0
    assert write["posix"]["bytes_written"] > write["bytes_written"]  # plus HDF5's metadata
    assert write["hdf5"]["dataset_writes"] == 1 and read["hdf5"]["dataset_reads"] == 1
    status = {(c["layer"], c["knob"]): c for c in write["settings"]}
    assert status[("hdf5", "alignment")]["status"] == "applied"
    assert status[("hdf5", "sieve_buf_size")]["effective"] == "131072"
    for key in (("hdf5", "coll_metadata_writes"), ("hdf5", "transfer_mode"), ("mpiio", "romio_cb_write")):
        assert status[key]["status"] == "not_applicable", key
        assert "sec2" in status[key]["reason"]
    chunk = status[("hdf5", "chunk_dims")]
    assert (chunk["effective"], chunk["status"]) == ("16,250", "changed")  # clamped to the fixed extent
    assert "clamped" in chunk["reason"]


def test_serial_program_without_settings_is_measured(tmp_path, programs):
    result = run_job([programs["serial_h5"], tmp_path / "grid.h5"])
    assert result.ok
    assert result.report.settings["status"] == "none"
    assert len(result.report.data_phases()) == 2
