"""bench/sweep.py on a tiny space and kernel: every point measured as scheduled, resumable,
refuses to mix recordings, and its analysis. Timings are not judged here."""

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from iotuner.tune import replay

pytestmark = pytest.mark.mpi

SWEEP = Path(__file__).resolve().parents[1] / "bench" / "sweep.py"
SPACE = {
    "name": "two",
    "dimensions": [
        {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable"]},
        {"knob": "mpiio.romio_ds_write", "values": ["automatic", "disable"]},
    ],
}


def sweep(tmp_path, *extra, baseline=None):
    space = tmp_path / "space.json"
    space.write_text(json.dumps(SPACE))
    base = tmp_path / "baseline.json"
    base.write_text(json.dumps(baseline or {"version": 1, "mpiio": {"romio_cb_write": "enable"}}))
    cmd = [
        sys.executable,
        str(SWEEP),
        "--space",
        str(space),
        "--baseline",
        str(base),
        "--out",
        str(tmp_path / "rec.json.gz"),
        "--repeats",
        "2",
        "--default-every",
        "2",
        "--refine-top",
        "1",
        "--refine-repeats",
        "2",
        "--scratch",
        str(tmp_path),
        "--chunk",
        "0",
        "--pause",
        "0",
        *extra,
        "--",
        "h5ior",
        "-b",
        "256K",
        "-t",
        "64K",
        "-p",
        "strided",
        "-r",
        "-o",
        "{scratch}",
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def test_sweep_measures_every_point_and_resumes(tmp_path):
    first = sweep(tmp_path, "--max-chunks", "3")
    assert first.returncode == 0, first.stderr
    assert "stopped after 3 chunk(s)" in first.stdout
    assert replay.load(tmp_path / "rec.json.gz").meta["schedule"]["done"] == 3
    done = sweep(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "resuming" in done.stdout and "best point" in done.stdout
    rec = replay.load(tmp_path / "rec.json.gz")
    sched = rec.meta["schedule"]
    refined = sched["refine"]
    # the best point first, then those the analysis compares: the baseline's point 0 (cb enable, ds
    # automatic), its two single-knob changes 1 and 2, and the best with a change undone (within these,
    # unless the best is 3, whose undone changes are 1 and 2)
    best = max(range(4), key=lambda i: -statistics.median(w + r for w, r, *_ in rec.points[i].runs[:2]))
    assert refined[0] == best and sorted(refined) == sorted({0, 1, 2, best})
    # 4 points x 2 rounds, the refined ones 2 more; the default first, after every 2 points, at each round's end
    assert [len(p.runs) + p.failures for p in rec.points] == [4 if i in refined else 2 for i in range(4)]
    assert len(rec.default.runs) + rec.default.failures == 1 + 2 * (2 + 1) + 2 * (len(refined) // 2 + 1)
    assert rec.command[0] == "h5ior" and rec.bytes_written == 2 * 256 * 1024 == rec.bytes_read
    assert all(len(run) == 3 for p in rec.points for run in p.runs)  # with the others' CPU use
    # the read-back: disabling data sieving shows, and the point that is the baseline differs in nothing
    assert rec.points[1].effective == {"mpiio.romio_ds_write": "disable"}
    assert rec.points[0].effective == {}
    again = sweep(tmp_path)
    assert again.returncode == 0 and replay.load(tmp_path / "rec.json.gz").meta["schedule"]["done"] == sched["done"]
    other = sweep(tmp_path, baseline={"version": 1})
    assert other.returncode != 0 and "records another baseline" in other.stderr
    analysis = subprocess.run(
        [sys.executable, str(SWEEP), "--space", "x", "--out", str(tmp_path / "rec.json.gz"), "--analyse"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert analysis.returncode == 0, analysis.stderr
    assert "single-knob changes from the baseline" in analysis.stdout


def test_model_input_adds_a_portable_report_and_keeps_the_runs(tmp_path):
    """A recording made without the model's input gets a run report of one more run of the default (not added
    to its runs) and the calibration named, and the report names the scratch directory and the kernel as the
    recording's command does, not by this machine's paths."""
    assert sweep(tmp_path, "--max-chunks", "1").returncode == 0
    rec = replay.load(tmp_path / "rec.json.gz")
    rec.report = rec.calibration = None
    rec.save(tmp_path / "rec.json.gz")
    before = json.loads(json.dumps([rec.default.runs, [p.runs for p in rec.points]]))
    cal = tmp_path / "calibration.json"
    cal.write_text(json.dumps({"format": "iotuner-calibration", "version": 1, "measurements": []}))
    r = sweep(tmp_path, "--model-input", "--calibration", str(cal))
    assert r.returncode == 0, r.stderr
    assert "added a run report" in r.stdout and "the calibration" in r.stdout
    rec = replay.load(tmp_path / "rec.json.gz")
    assert json.loads(json.dumps([rec.default.runs, [p.runs for p in rec.points]])) == before
    assert rec.calibration == json.loads(cal.read_text())
    text = json.dumps(rec.report)
    assert rec.report["phases"] and str(tmp_path) not in text and "{scratch}/model-input" in text
    assert rec.report["run"]["command"][0] == "h5ior" and "/" not in rec.report["run"]["executable"]
    again = sweep(tmp_path, "--model-input", "--calibration", str(cal))
    assert again.returncode == 0 and "has a report and a calibration already" in again.stdout
