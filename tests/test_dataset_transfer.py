"""A transfer mode asked for some datasets only (a group with a dataset pattern) is read back for each of them
and has its row in the report and in `iotuner run`'s table, as every other setting: requested, effective, status.
It used to be read back only at the file's first transfer, so a pattern that missed the first dataset left the
report without a row (`settings: []`) and said the pattern matched nothing."""

import json
import os
import subprocess
import sys

import pytest

from conftest import kernel, mpi

# h5ior: 2 segments (/Step#0/data, /Step#1/data), 8 transfers of 128 KiB each per rank and segment
H5IOR = ["-s", "2", "-b", "1M", "-t", "128K"]


def run(tmp_path, doc, mode):
    (tmp_path / "s.json").write_text(json.dumps(doc))
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "run", "--config", tmp_path / "s.json", "--report", tmp_path / "r.json"]
        + ["--", *mpi(), kernel("h5ior"), *H5IOR, "-m", mode, "-o", tmp_path / "out"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    rows = {
        (c.get("dataset"), c["requested"], c["effective"], c["status"]) for p in rep["phases"] for c in p["settings"]
    }
    return r.stdout, rows, rep["settings"].get("without_phase", [])


@pytest.mark.mpi
@pytest.mark.parametrize("segment", [0, 1])
def test_a_transfer_mode_for_some_datasets_has_its_row(tmp_path, segment):
    doc = {"version": 1, "groups": [{"dataset": f"/Step#{segment}/*", "hdf5": {"transfer_mode": "collective"}}]}
    out, rows, absent = run(tmp_path, doc, "independent")
    assert rows == {(f"/Step#{segment}/data", "collective", "collective", "applied")}
    assert absent == [], absent  # no "no dataset matched"
    assert f"hdf5.transfer_mode [/Step#{segment}/data]" in out


@pytest.mark.mpi
def test_the_files_mode_and_a_datasets_own_each_have_a_row(tmp_path):
    doc = {
        "version": 1,
        "hdf5": {"transfer_mode": "independent"},
        "groups": [{"dataset": "/Step#1/*", "hdf5": {"transfer_mode": "collective"}}],
    }
    out, rows, absent = run(tmp_path, doc, "collective")
    assert rows == {
        (None, "independent", "independent", "applied"),
        ("/Step#1/data", "collective", "collective", "applied"),
    }
    assert absent == []
