"""When settings make an HDF5 call fail, the runtime retries with the
application's own properties: the job and its data survive."""

import subprocess

import pytest

from conftest import h5diff, mpi, run_job, write_json

pytestmark = pytest.mark.mpi


def test_impossible_chunking_falls_back(tmp_path, programs):
    plain = tmp_path / "plain.h5"
    r = subprocess.run(mpi() + [str(programs["chunk_fallback"]), str(plain)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # 2^30 doubles per chunk is 8 GiB: HDF5 accepts the property but refuses the dataset (chunks < 4 GiB)
    cfg = write_json(tmp_path / "s.json", {"version": 1, "hdf5": {"chunk_dims": [1 << 30]}})
    tuned = tmp_path / "tuned.h5"
    result = run_job(mpi() + [programs["chunk_fallback"], tuned], config=cfg)
    assert result.ok, result.stderr
    assert "chunk_fallback: ok" in result.stdout
    assert "HDF5-DIAG" not in result.stderr  # our failed attempt stays silent
    (check,) = result.report.checks(knob="chunk_dims")
    assert check["status"] == "failed"
    assert "created with the application's own layout" in check["reason"]
    layout = subprocess.run(["h5dump", "-p", "-H", str(tuned)], capture_output=True, text=True).stdout
    assert "CHUNKED ( 1024 )" in layout
    assert h5diff(plain, tuned).returncode == 0
