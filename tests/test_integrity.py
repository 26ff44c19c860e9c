"""Tuned output files hold the same data as untuned ones."""

import subprocess

import pytest

from conftest import h5diff, kernel, mpi, run_job, write_json

pytestmark = pytest.mark.mpi

# settings that change the file layout and the I/O path, not the data
TUNED = {
    "version": 1,
    "hdf5": {
        "alignment": [4096, "64K"],
        "sieve_buf_size": "256K",
        "meta_block_size": "64K",
        "mdc_initial_size": "4M",
        "transfer_mode": "independent",
    },
    "mpiio": {"romio_cb_write": "enable", "cb_config_list": "*:2", "cb_nodes": 2, "cb_buffer_size": "1M"},
    "groups": [{"dataset": "p*", "hdf5": {"chunk_dims": [65536]}}],
}


def test_tuned_and_untuned_vpicio_are_equal(tmp_path):
    args = [kernel("vpicio"), "-n", "200K", "-t", "2"]
    plain = subprocess.run(mpi() + args + ["-o", str(tmp_path / "plain")], capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
    result = run_job(mpi() + args + ["-o", tmp_path / "tuned", "-r"], config=write_json(tmp_path / "t.json", TUNED))
    assert result.ok, result.stderr
    assert "vpicio verify: ok" in result.stdout

    # the settings really changed the file: px, py, pz are chunked, the rest is not
    chunked = {
        c["dataset"].rsplit("/", 1)[-1] for c in result.report.checks(knob="chunk_dims") if c["status"] == "applied"
    }
    assert chunked == {"px", "py", "pz"}
    layout = subprocess.run(
        ["h5dump", "-p", "-H", str(tmp_path / "tuned" / "vpicio.h5")], capture_output=True, text=True
    ).stdout
    assert layout.count("CHUNKED") == 6  # 3 datasets x 2 steps
    assert result.report.checks(knob="transfer_mode")[0]["effective"] == "independent"

    diff = h5diff(tmp_path / "plain" / "vpicio.h5", tmp_path / "tuned" / "vpicio.h5")
    assert diff.returncode == 0, diff.stdout + diff.stderr


def test_h5diff_notices_a_difference(tmp_path):
    """The comparison above can fail: different timestep counts differ under h5diff."""
    for name, steps in (("a", "1"), ("b", "2")):
        r = subprocess.run(
            mpi() + [kernel("vpicio"), "-n", "4K", "-t", steps, "-o", str(tmp_path / name)],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0
    assert h5diff(tmp_path / "a" / "vpicio.h5", tmp_path / "b" / "vpicio.h5").returncode != 0
