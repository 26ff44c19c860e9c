"""Pure MPI-IO programs: hints applied at MPI_File_open, exact POSIX byte counts, data intact."""

import pytest

from conftest import mpi, run_job, write_json

pytestmark = pytest.mark.mpi

BLOCK, COUNT = 65536, 16


def expected_file(ranks):
    return bytes((off % 251) for off in range(ranks * COUNT * BLOCK))


@pytest.mark.parametrize("mode", ["independent", "collective"])
def test_mpiio_program(tmp_path, programs, mode):
    cfg = write_json(
        tmp_path / "s.json",
        {
            "version": 1,
            "mpiio": {"romio_cb_write": "enable", "cb_config_list": "*:2", "cb_nodes": 2, "cb_buffer_size": "256K"},
        },
    )
    out = tmp_path / "data.bin"
    result = run_job(mpi() + [programs["mpiio_write"], out, BLOCK, COUNT, mode], config=cfg)
    assert result.ok, result.stderr
    assert out.read_bytes() == expected_file(2)
    (phase,) = result.report.data_phases()
    assert phase["kind"] == "mpiio" and phase["ranks"] == 2
    assert phase["data_level"] == "mpiio"
    assert phase["bytes_written"] == 2 * COUNT * BLOCK  # the application's bytes, all ranks
    assert phase["mpiio"]["write_calls"] == 2 * COUNT
    if mode == "independent":  # each call is one POSIX write of its block
        assert phase["posix"]["write_calls"] == 2 * COUNT and phase["posix"]["bytes_written"] == 2 * COUNT * BLOCK
    assert phase["wall_time_s"] > 0 and phase["write_bandwidth_mib_s"] > 0
    checks = {c["knob"]: c for c in phase["settings"]}
    assert {k: c["status"] for k, c in checks.items()} == {
        "romio_cb_write": "applied",
        "cb_config_list": "applied",
        "cb_nodes": "applied",
        "cb_buffer_size": "applied",
    }
    assert phase["mpi_hints"]["cb_buffer_size"] == "262144"


def test_repeated_opens_are_separate_phases(tmp_path, programs):
    out = tmp_path / "data.bin"
    for _ in range(2):
        result = run_job(mpi() + [programs["mpiio_write"], out, 4096, 4, "independent"])
        assert result.ok
    # one run, one open: occurrence 0; each run reports only its own phase
    (phase,) = result.report.data_phases()
    assert phase["occurrence"] == 0 and phase["bytes_written"] == 2 * 4 * 4096


def test_files_on_dev_shm_are_tracked(programs):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        out = Path(d) / "data.bin"
        result = run_job(mpi() + [programs["mpiio_write"], out, 4096, 4, "independent"])
        assert result.ok
        (phase,) = result.report.data_phases()
        assert phase["file"] == str(out) and phase["bytes_written"] == 2 * 4 * 4096
