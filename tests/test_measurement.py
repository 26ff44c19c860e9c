"""Byte counts are exact; times of many small calls are estimated from a
weighted random sample, and the estimate must agree with the truth."""

import pytest

from conftest import kernel, run_job
from perf import Claim, assert_claims

pytestmark = pytest.mark.mpi


def phase_of(report, suffix):
    return next(p for p in report.phases if p["file"].endswith(suffix))


@pytest.mark.serial  # compares the runtime's clock with the program's
def test_sampled_time_estimates_the_write_loop(tmp_path):
    """Counts are checked on every run; the time estimate against the program's own clock over as many runs as
    the noise needs (tests/perf.py), since one preemption of an unsampled call can move a single run's estimate
    by tens of percent."""
    writes, h5writes = 200_000, 20_000

    def estimate_over_clock(i):
        out = tmp_path / str(i)
        out.mkdir()
        result = run_job([kernel("bench_overhead"), out, writes, h5writes, 64])
        assert result.ok, result.stderr
        fields = dict(kv.split("=") for kv in result.stdout.split())

        posix = phase_of(result.report, "overhead_posix.dat")
        assert posix["posix"]["write_calls"] == writes and posix["posix"]["bytes_written"] == writes * 64  # exact
        assert posix["data_level"] == "posix" and posix["bytes_written"] == writes * 64
        assert posix["time_sampled"] is True

        h5 = phase_of(result.report, "overhead.h5")
        assert h5["hdf5"]["dataset_writes"] == h5writes
        assert h5["data_level"] == "hdf5" and h5["bytes_written"] == h5writes * 64  # 8 doubles per call
        assert h5["time_sampled"] is True
        return {
            "posix": posix["posix"]["write_time_s"] / float(fields["posix_s"]),
            "hdf5": h5["hdf5"]["write_time_s"] / float(fields["h5_s"]),
        }

    # time inside the calls is most of each loop; a wrong weight (1 instead of 16) would give ~6%
    assert_claims(
        estimate_over_clock, {"posix": Claim(above=0.5, below=1.1), "hdf5": Claim(above=0.5, below=1.1)}, most=24
    )  # under load a preempted sampled call weighs 16 calls: more samples


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
