"""The run report's access pattern of collective MPI-IO calls (docs/report.md, Access patterns)."""

import json

import pytest

from conftest import mpi, run_job
from test_contracts import validate_report

pytestmark = pytest.mark.mpi

BLOCK, COUNT = 4096, 8


def run(tmp_path, programs, pattern, calls):
    result = run_job(mpi() + [programs["two_phase"], tmp_path / "d.bin", BLOCK, COUNT, pattern, "both", calls],
                     report=tmp_path / "r.json")
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
            assert x["view"] == {"filetype_size": COUNT * BLOCK, "filetype_extent": (2 * COUNT - 1) * BLOCK,
                                 "filetype_requests": COUNT}
            assert (d["calls"], d["requests"], d["call_requests"]) == (2, COUNT, COUNT // 2)
            assert d["request_min"] == d["request_max"] == BLOCK and d["request_stride"] == 2 * BLOCK
            assert d["offset"] == x["rank"] * BLOCK and d["end"] == (2 * COUNT - 2 + x["rank"] + 1) * BLOCK
            assert d["call_step"] == COUNT * BLOCK and not d["contiguous"] and d["unflattened_calls"] == 0


def test_independent_calls_have_no_access_entry(tmp_path, programs):
    result = run_job(mpi() + [programs["mpiio_write"], tmp_path / "d.bin", 4096, 4, "independent"],
                     report=tmp_path / "r.json")
    assert result.ok
    assert "access" not in result.report.data


def test_one_process_phases_have_their_pattern_and_folded_ones_none():
    from iotuner.report import Report
    entry = {"write": {"calls": 1}}
    rep = Report({"phases": [{"group_size": 1}, {"group_size": 1}, {"group_size": 2}],
                  "access": [{"phase": 0, "ranks_total": 1, "ranks": [{"rank": 0, **entry}]},
                             {"phase": 1, "ranks_total": 2, "ranks": [{"rank": 0, **entry}, {"rank": 1, **entry}]},
                             {"phase": 2, "ranks_total": 2, "ranks": [{"rank": 0, **entry}, {"rank": 1, **entry}]}]})
    assert [x["rank"] for x in rep.access(0)] == [0]  # a job of one process: one collective of one
    assert rep.access(1) == []  # files each opened by one process, folded: not one collective of two
    assert [x["rank"] for x in rep.access(2)] == [0, 1]
