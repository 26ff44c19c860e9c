"""The run report's access pattern of collective MPI-IO calls (docs/report.md, Access patterns)."""

import json

import pytest

from conftest import mpi, run_job
from test_contracts import validate_report

pytestmark = pytest.mark.mpi

BLOCK, COUNT = 4096, 8


def run(tmp_path, programs, pattern, calls):
    result = run_job(
        mpi() + [programs["two_phase"], tmp_path / "d.bin", BLOCK, COUNT, pattern, "both", calls],
        report=tmp_path / "r.json",
    )
    assert result.ok and "two_phase: ok" in result.stdout, result.stderr
    validate_report(json.loads((tmp_path / "r.json").read_text()))
    (write_phase, read_phase) = result.report.data_phases()
    return result.report, write_phase, read_phase


def test_contiguous_blocks_per_rank(tmp_path, programs):
    per_call = 2  # four calls of two blocks each per rank
    rep, w, r = run(tmp_path, programs, "contiguous", per_call)
    for phase, direction in ((w, "write"), (r, "read")):
        ranks = rep.access(rep.phases.index(phase))
        assert [x["rank"] for x in ranks] == [0, 1]
        for x in ranks:
            d = x[direction]
            base = x["rank"] * COUNT * BLOCK
            calls = COUNT // per_call
            assert (d["calls"], d["bytes"], d["requests"]) == (calls, COUNT * BLOCK, calls)
            assert (d["offset"], d["end"]) == (base, base + COUNT * BLOCK)
            assert d["call_bytes"] == d["request_min"] == d["request_max"] == per_call * BLOCK
            assert d["call_step"] == per_call * BLOCK and d["request_stride"] == 0 and d["contiguous"]
            assert ("read" if direction == "write" else "write") not in x


def test_strided_view_is_flattened(tmp_path, programs):
    rep, w, r = run(tmp_path, programs, "strided", 4)  # a vector view, two calls of four blocks each
    for phase, direction in ((w, "write"), (r, "read")):
        for x in rep.access(rep.phases.index(phase)):
            d = x[direction]
            assert x["view"] == {
                "filetype_size": COUNT * BLOCK,
                "filetype_extent": (2 * COUNT - 1) * BLOCK,
                "filetype_requests": COUNT,
            }
            assert (d["calls"], d["requests"], d["call_requests"]) == (2, COUNT, COUNT // 2)
            assert d["request_min"] == d["request_max"] == BLOCK and d["request_stride"] == 2 * BLOCK
            assert d["offset"] == x["rank"] * BLOCK and d["end"] == (2 * COUNT - 2 + x["rank"] + 1) * BLOCK
            assert d["call_step"] == COUNT * BLOCK and not d["contiguous"] and d["unflattened_calls"] == 0


def test_independent_calls_have_no_access_entry(tmp_path, programs):
    result = run_job(
        mpi() + [programs["mpiio_write"], tmp_path / "d.bin", 4096, 4, "independent"], report=tmp_path / "r.json"
    )
    assert result.ok
    assert "access" not in result.report.data


def test_one_process_phases_have_their_pattern_and_folded_ones_none():
    from iotuner.run_report import Report

    entry = {"write": {"calls": 1}}
    rep = Report(
        {
            "phases": [{"group_size": 1}, {"group_size": 1}, {"group_size": 2}],
            "access": [
                {"phase": 0, "ranks_total": 1, "ranks": [{"rank": 0, **entry}]},
                {"phase": 1, "ranks_total": 2, "ranks": [{"rank": 0, **entry}, {"rank": 1, **entry}]},
                {"phase": 2, "ranks_total": 2, "ranks": [{"rank": 0, **entry}, {"rank": 1, **entry}]},
            ],
        }
    )
    assert [x["rank"] for x in rep.access(0)] == [0]  # a job of one process: one collective of one
    assert rep.access(1) == []  # files each opened by one process, folded: not one collective of two
    assert [x["rank"] for x in rep.access(2)] == [0, 1]


@pytest.mark.parametrize("order", ["c", "fortran"])
@pytest.mark.parametrize("rows", [8, 8192])
def test_subarray_view_is_flattened(tmp_path, programs, order, rows):
    """A view made by MPI_Type_create_subarray (a band of COLS columns of a 2-D array per rank, in C or
    Fortran order) is flattened: one request per row, one row of the array apart, each rank COLS doubles
    after the one before. 8,192 rows is more pieces than the first 4,096 the flattening holds before it grows."""
    cols = 16
    result = run_job(
        mpi() + [programs["subarray_view"], tmp_path / "d.bin", rows, cols, order], report=tmp_path / "r.json"
    )
    assert result.ok and "subarray_view: ok" in result.stdout, result.stderr
    validate_report(json.loads((tmp_path / "r.json").read_text()))
    [phase] = result.report.data_phases()  # written and read back while open: one phase
    row = 2 * cols * 8
    for direction in ("write", "read"):
        for x in result.report.access(result.report.phases.index(phase)):
            d = x[direction]
            assert x["view"] == {
                "filetype_size": rows * cols * 8,
                "filetype_extent": rows * row,
                "filetype_requests": rows,
            }
            assert d["unflattened_calls"] == 0 and (d["calls"], d["requests"], d["call_requests"]) == (1, rows, rows)
            assert d["request_min"] == d["request_max"] == cols * 8 and d["request_stride"] == row
            assert d["offset"] == x["rank"] * cols * 8 and d["end"] == (rows - 1) * row + (x["rank"] + 1) * cols * 8


def test_views_set_again_and_again_do_not_grow_memory(tmp_path, programs):
    """HDF5 sets a view around every collective H5Dwrite; a file keeps only its last few flattened views, so
    4,000 views of 8,192 pieces (128 KiB each once flattened) grow a rank by far less than keeping them would
    (500 MiB), and the pattern afterwards is still exact."""
    import re

    result = run_job(
        mpi() + [programs["subarray_view"], tmp_path / "d.bin", 8192, 16, "c", 2000], report=tmp_path / "r.json"
    )
    assert result.ok and "subarray_view: ok" in result.stdout, result.stderr
    grew = int(re.search(r"4000 views, memory grew (-?\d+) KiB", result.stdout).group(1))
    assert grew < 32 * 1024
    [phase] = result.report.data_phases()
    for x in result.report.access(result.report.phases.index(phase)):
        assert x["write"]["unflattened_calls"] == 0 and x["write"]["requests"] == 8192
