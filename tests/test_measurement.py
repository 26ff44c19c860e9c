"""Byte counts are exact; times of many small calls are estimated from a
weighted random sample, and the estimate must agree with the truth."""

import pytest

from conftest import kernel, run_job

pytestmark = pytest.mark.mpi


def phase_of(report, suffix):
    return next(p for p in report.phases if p["file"].endswith(suffix))


def test_sampled_time_estimates_the_write_loop(tmp_path):
    writes, h5writes = 200_000, 20_000
    result = run_job([kernel("bench_overhead"), tmp_path, writes, h5writes, 64])
    assert result.ok, result.stderr
    fields = dict(kv.split("=") for kv in result.stdout.split())
    loop_s = float(fields["posix_s"])  # the program's own timing of its write loop

    posix = phase_of(result.report, "overhead_posix.dat")
    assert posix["posix"]["write_calls"] == writes and posix["posix"]["bytes_written"] == writes * 64  # exact
    assert posix["data_level"] == "posix" and posix["bytes_written"] == writes * 64
    assert posix["time_sampled"] is True
    # time inside write() is most of the loop; a wrong weight (1 instead of 16) would give ~6%
    estimate = posix["posix"]["write_time_s"]
    assert 0.5 * loop_s < estimate < 1.1 * loop_s, (estimate, loop_s)

    h5 = phase_of(result.report, "overhead.h5")
    assert h5["hdf5"]["dataset_writes"] == h5writes
    assert h5["data_level"] == "hdf5" and h5["bytes_written"] == h5writes * 64  # 8 doubles per call
    assert h5["time_sampled"] is True
    h5_loop = float(fields["h5_s"])
    assert 0.5 * h5_loop < h5["hdf5"]["write_time_s"] < 1.1 * h5_loop


def test_few_calls_are_timed_exactly(tmp_path):
    result = run_job([kernel("bench_overhead"), tmp_path, 500, 100, 4096])
    assert result.ok
    posix = phase_of(result.report, "overhead_posix.dat")
    assert posix["posix"]["write_calls"] == 500 and posix["time_sampled"] is False


def test_bytes_follow_every_change_of_a_reused_selection(tmp_path, programs):
    """The point count of a dataspace is remembered between writes; every way of changing it must be seen."""
    result = run_job([programs["selections"], tmp_path / "s.h5"])
    assert result.ok, result.stderr
    told = dict(field.split("=") for field in result.stdout.split())
    (phase,) = result.report.data_phases()
    assert phase["hdf5"]["dataset_writes"] == int(told["writes"])
    assert phase["bytes_written"] == int(told["bytes"])
