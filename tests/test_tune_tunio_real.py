"""TunIO's search on a real kernel: it stops itself early and its gain is confirmed."""

import json
import subprocess
import sys
import tempfile

import pytest

from conftest import kernel

pytestmark = [pytest.mark.mpi, pytest.mark.slow, pytest.mark.serial]  # serial: a tuning judged on measured gains


def test_tunio_tunes_a_kernel_and_stops_itself_early(tmp_path):
    baseline = tmp_path / "one-aggregator.json"
    baseline.write_text(json.dumps({"version": 1, "mpiio": {"romio_cb_write": "enable"}}))
    budget = 160  # 20 generations: far more than it should need
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:  # 1-10% noise there, 15-35% on disk
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "iotuner",
                "tune",
                "--baseline",
                str(baseline),
                "--trials",
                str(budget),
                "--objective",
                "write-bw",
                "--space",
                "romio",
                "--strategy",
                "tunio",
                "--study",
                "tunio",
                "--out",
                str(tmp_path / "out"),
                "--scratch",
                scratch,
                "--",
                kernel("h5ior"),
                "-b",
                "32M",
                "-t",
                "1M",
                "-o",
                "{scratch}",
            ],
            capture_output=True,
            text=True,
            timeout=1200,
        )
    assert r.returncode == 0, r.stderr + r.stdout[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    # it stopped itself, with its reason printed, long before the budget
    assert summary["stop"]["rule"] == "learned-stopper", summary["stop"]
    assert summary["trials_run"] < budget / 2
    assert "stopped: learned stopper: after iteration" in " ".join(r.stdout.split())  # wrapped to the width
    # and what it found holds against the baseline, interleaved in the confirmation round
    assert summary["verdict"]["significant"] is True, (summary["verdict"], summary["notes"])
    assert summary["verdict"]["gain"] >= 3.0, summary["verdict"]
    assert summary["roti"]["final"] > 0 and summary["viability"]["runs"] is not None
