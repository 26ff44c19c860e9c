"""HDF5 1.14's multi-dataset calls (H5Dwrite_multi / H5Dread_multi) and 1.13+'s asynchronous calls with event
sets (H5Fcreate_async, H5Dwrite_async, ... H5ESwait) give the same phases and settings as the same program
written with H5Dwrite / H5Dread. They run where HDF5 has these calls (the Debian 13 leg:
scripts/debian13.sh) and skip on older HDF5."""

import subprocess
from pathlib import Path

import pytest

from conftest import MPICC, PROGRAMS, _pkg_config, mpi, run_job, write_json

pytestmark = pytest.mark.mpi

ROWS = 2 * 256  # the program's rows, all ranks
ROW_BYTES = 1024 * 4
SETTINGS = {"version": 1, "hdf5": {"transfer_mode": "collective"}}


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("later") / "h5_later_calls"
    subprocess.run(
        [
            MPICC,
            "-O1",
            str(PROGRAMS / "h5_later_calls.c"),
            "-o",
            str(exe),
            *_pkg_config("--cflags"),
            *_pkg_config("--libs"),
        ],
        check=True,
    )
    return exe


def run(program, mode, tmp_path):
    cfg = write_json(tmp_path / f"{mode}.json", SETTINGS)
    result = run_job(mpi() + [program, mode, tmp_path / f"{mode}.h5"], config=cfg, report=tmp_path / f"{mode}.r.json")
    if result.returncode == 77:
        pytest.skip(f"this HDF5 has no {mode} calls (HDF5 >= 1.14 has them)")
    assert result.ok, result.stderr
    assert f"rows={ROWS}" in result.stdout
    return result.report


def shape(report):
    """What must not depend on the family of calls: each phase's kind, bytes and transfer-mode verdict."""
    out = []
    for p in report.phases:
        modes = [(c["requested"], c["effective"], c["status"]) for c in p["settings"] if c["knob"] == "transfer_mode"]
        out.append((p["scope"], p["ranks"], p["bytes_written"], p["bytes_read"], p.get("data_level"), modes))
    return out


@pytest.mark.parametrize("mode", ["multi", "async"])
def test_later_calls_give_the_phases_and_settings_of_h5dwrite(program, mode, tmp_path):
    later = run(program, mode, tmp_path)
    plain = run(program, "plain", tmp_path)
    want = shape(plain)
    # the plain program's own phases: a write and a read of both datasets, the transfer mode applied in each
    # (the write phase also reads HDF5's metadata back)
    writes = [s for s in want if s[2]]
    reads = [s for s in want if s[3] and not s[2]]
    assert [s[2] for s in writes] == [2 * ROWS * ROW_BYTES] and [s[3] for s in reads] == [2 * ROWS * ROW_BYTES]
    assert all(s[4] == "hdf5" and s[5] == [("collective", "collective", "applied")] for s in writes + reads)
    assert shape(later) == want
    for total in ("bytes_written", "bytes_read"):
        assert later.totals[total] == plain.totals[total]
