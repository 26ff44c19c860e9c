"""The bandio target as recorded: its baseline and the sweep's best point run under `iotuner run`,
the best point's settings take effect as requested, and the knobs interact as docs/tuning.md
explains, seen in call counts. No timing here (bench/sweep.py and bench/strategies.py measure)."""

import json
import statistics
from pathlib import Path

import pytest

from conftest import mpi, run_job
from iotuner import settings
from iotuner.settings import as_text
from iotuner.tune import objective, replay

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

DATA = Path(__file__).resolve().parents[1] / "bench" / "data"


@pytest.fixture(scope="module")
def recording():
    return replay.load(DATA / "bandio-sweep.json.gz")


def run_point(rec, flat, out: Path):
    out.mkdir()
    cfg = out / "settings.json"
    settings.save(settings.from_flat(flat), cfg)
    app = [a.replace("{scratch}", str(out)) for a in rec.runnable_command()]
    return run_job(mpi() + app, config=cfg, report=out / "report.json", cwd=out)


def test_recording_is_the_bandio_target(recording):
    assert recording.space.name == "bandio" and len(recording.points) == recording.space.size()
    assert all(p.runs for p in recording.points)  # every point measured
    assert recording.command[0] == "bandio" and recording.baseline == settings.load(DATA / "bandio-baseline.json")
    assert len(recording.default.runs) >= 30


def test_baseline_and_best_point_run_and_read_back(recording, tmp_path):
    obj = objective.parse(recording.meta["schedule"]["objective"])
    best = max(recording.measured(), key=lambda p: obj.key(recording.median(p, obj)))
    base = run_point(recording, recording.flat_of(recording.default), tmp_path / "baseline")
    assert base.ok and "bandio verify: ok" in base.stdout, base.stderr[-2000:]
    flat = recording.flat_of(best)
    r = run_point(recording, flat, tmp_path / "best")
    assert r.ok and "bandio verify: ok" in r.stdout, r.stderr[-2000:]
    # every knob of the best point is applied and reads back as requested, in both phases; a creation
    # property (the chunk shape) in the read phase, which creates no dataset, is reported as not applicable
    checks = r.report.checks()
    for knob, value in flat.items():
        layer, name = knob.split(".", 1)
        mine = [c for c in checks if c["layer"] == layer and c["knob"] == name]
        assert mine, f"{knob} not verified"
        for c in mine:
            if c["status"] == "not_applicable" and "created no dataset" in (c.get("reason") or ""):
                continue
            assert c["status"] == "applied", c
            assert str(c["effective"]) == as_text(value), c
        assert any(c["status"] == "applied" for c in mine), knob
    # and the sweep judged it better than the baseline on its recorded runs
    med = statistics.median(recording.value(x, obj) for x in recording.default.runs)
    assert obj.better(recording.median(best, obj), med)
    assert json.loads(json.dumps(flat)) == flat


ROWS = 64 * 1024  # bandio -n 64K: one piece per row and rank


@pytest.mark.parametrize(
    "flat, per_piece",
    [
        ({}, "mpiio"),  # the baseline: independent transfers, one MPI-IO call per row
        ({"hdf5.chunk_dims": [65536, 16]}, "mpiio"),  # chunks alone: still per row (the halo)
        ({"hdf5.transfer_mode": "collective"}, None),  # collective buffering gathers the pieces
        ({"hdf5.transfer_mode": "collective", "hdf5.chunk_dims": [65536, 16]}, "posix"),  # naive: data sieving off
        (
            {
                "hdf5.transfer_mode": "collective",
                "hdf5.chunk_dims": [65536, 16],
                "mpiio.romio_ds_write": "automatic",
                "mpiio.romio_ds_read": "automatic",
            },
            None,
        ),  # all together: a few large writes per rank
    ],
)
def test_which_layer_splits_the_pieces(recording, tmp_path, flat, per_piece):
    full = {**settings.flatten(recording.baseline), **settings.flatten(settings.from_flat(flat))}
    r = run_point(recording, full, tmp_path / "run")
    assert r.ok and "bandio verify: ok" in r.stdout, r.stderr[-2000:]
    write, read = r.report.phases[0], r.report.phases[1]
    for phase, calls in ((write, "write_calls"), (read, "read_calls")):
        mpiio, posix = phase["mpiio"][calls], phase["posix"][calls]
        if per_piece == "mpiio":
            assert mpiio >= 2 * ROWS and posix >= 2 * ROWS
        elif per_piece == "posix":
            assert mpiio < 100 and posix >= 2 * ROWS
        else:
            assert mpiio < 100 and posix < 100
