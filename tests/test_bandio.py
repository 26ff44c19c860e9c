"""The bandio kernel writes what it says: the file holds the same data whatever the layout, transfer
mode and ghost cells (h5diff against a plain run), the dataset has the documented shape, the run report
counts exactly the bytes of the bands, and bad options stop with a message. No timing here."""

import re
import subprocess

import pytest

from conftest import h5diff, kernel, mpi, run_job, write_json

pytestmark = pytest.mark.mpi

ROWS, COLS, SLAB = 2048, 8, 256  # rows, columns per rank, rows per H5Dwrite
ARGS = ["-n", "2K", "-c", str(COLS), "-s", str(SLAB), "-v", "2"]


def run_plain(out, *extra):
    r = subprocess.run(
        mpi() + [kernel("bandio"), *ARGS, *extra, "-r", "-o", str(out)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0 and "bandio verify: ok" in r.stdout, r.stderr
    return out / "bandio.h5"


def header(path) -> str:
    return subprocess.run(["h5dump", "-p", "-H", str(path)], capture_output=True, text=True, check=True).stdout


def test_every_layout_and_mode_writes_the_same_data(tmp_path):
    reference = run_plain(tmp_path / "plain")  # no ghost cells, contiguous, the kernel's own transfer mode
    text = header(reference)
    assert text.count("DATASET") == 2 and f"SIMPLE {{ ( {ROWS}, {2 * COLS} )" in text and "CONTIGUOUS" in text
    # the data is not constant (so equality below means something): rank 0's first row differs from rank 1's
    rows = subprocess.run(
        ["h5dump", "-d", "/Step#0/field0", "-s", "0,0", "-c", f"1,{2 * COLS}", "-y", "-w", "0", str(reference)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    values = re.findall(r"-?\d+\.\d+(?:e[-+]\d+)?", rows.split("DATA {")[1])
    assert len(values) == 2 * COLS and len(set(values)) == 2 * COLS

    # ghost cells in the local arrays are not written
    assert h5diff(reference, run_plain(tmp_path / "ghost", "-g", "2")).returncode == 0
    # the sweep's best kind of point: chunked bands, collective transfers, data sieving, two aggregators
    doc = {
        "version": 1,
        "hdf5": {"chunk_dims": [SLAB, COLS], "transfer_mode": "collective"},
        "mpiio": {"romio_ds_write": "automatic", "romio_ds_read": "automatic", "cb_nodes": 2, "cb_config_list": "*:2"},
    }
    out = tmp_path / "tuned"
    out.mkdir()
    r = run_job(
        mpi() + [kernel("bandio"), *ARGS, "-g", "1", "-r", "-o", out],
        config=write_json(tmp_path / "s.json", doc),
        report=tmp_path / "report.json",
    )
    assert r.ok and "bandio verify: ok" in r.stdout, r.stderr[-2000:]
    assert f"CHUNKED ( {SLAB}, {COLS} )" in header(out / "bandio.h5")
    assert h5diff(reference, out / "bandio.h5").returncode == 0
    # the report counts the bands' bytes: 2 datasets x rows x columns x ranks x 8 bytes, written and read
    data = 2 * ROWS * COLS * 2 * 8
    io = r.report.data_phases()
    assert sum(p["bytes_written"] for p in io) == data and sum(p["bytes_read"] for p in io) == data


@pytest.mark.parametrize(
    "args, message",
    [
        (["-n", "1000", "-s", "300"], "-s must divide -n"),
        (["-n", "0"], "must be positive"),
        (["-g", "2000"], "-g"),
    ],
)
def test_bad_options_are_named(tmp_path, args, message):
    r = subprocess.run(
        mpi() + [kernel("bandio"), *args, "-o", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode != 0 and message in r.stderr, r.stderr
    assert not (tmp_path / "bandio.h5").exists()
