"""The viability point of a real study, against a hand calculation from the whole program's wall times.

The program writes a shared file with collective calls, 4 ranks on 2 cores in /dev/shm: ROMIO's collective
buffering makes its write phase most of the run, and `romio_cb_write=disable` makes it several times faster
while hardly any of that time is inside POSIX calls (so an I/O share taken from the POSIX calls, as before,
put the viability point ~20x too far)."""

import json
import math
import statistics
import subprocess
import sys
import tempfile

import pytest

from conftest import one_knob_space
from iotuner.tune.store import CONFIRMATION, DEFAULT, Store

pytestmark = [pytest.mark.mpi, pytest.mark.slow, pytest.mark.serial]  # serial: a real study's measured gain

RANKS = 4  # more ranks than cores: collective buffering's exchange spins, the write phase dominates the run
BLOCK, COUNT = 1 << 20, 96  # 96 MiB per rank


def iotuner(*args, **kw):
    return subprocess.run([sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, **kw)


def test_viability_point_matches_the_runs_saved_time(tmp_path, programs):
    space = one_knob_space(tmp_path / "space.json", "cb", "mpiio.romio_cb_write", ["automatic", "disable"])
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        app = [str(programs["mpiio_write"]), "{scratch}/shared.dat", BLOCK, COUNT, "collective"]
        r = iotuner(
            "tune",
            "--space",
            space,
            "--strategy",
            "grid",
            "--objective",
            "write-bw",
            "--confirm-top",
            1,
            "--study",
            "viability",
            "--out",
            tmp_path / "out",
            "--scratch",
            scratch,
            "--ranks",
            RANKS,
            "--",
            *app,
            timeout=1200,
        )
        assert r.returncode == 0, r.stderr + r.stdout[-3000:]
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["verdict"]["significant"], summary["verdict"]
        best = json.loads((tmp_path / "out" / "best.json").read_text())
        assert best["groups"][-1]["mpiio"] == {"romio_cb_write": "disable"}, best
        v = summary["viability"]
        assert v["runs"] is not None, v
        tuning_s = summary["tuning_time_s"]
        print(f"viability: {v}; tuning {tuning_s:.1f} s", file=sys.stderr)  # shown when the test fails

        # by hand, from the whole program's wall time around mpiexec (the runner's clock, not the report's
        # phases that viability reads), in the confirmation round: the default's runs and the winner's,
        # interleaved there, so a change of the machine's load between two measurements cannot bias it
        store = Store.open(f"sqlite:///{tmp_path / 'out' / 'study.db'}", "viability", heartbeat_s=None)
        walls: dict = {}
        for rec in store.trials.records(CONFIRMATION):
            if rec.ok:
                walls.setdefault(rec.attrs.get("candidate") == DEFAULT, []).append(rec.duration_s)
        saved = statistics.median(walls[True]) - statistics.median(walls[False])
        print(f"confirmation walls: default {walls[True]}, winner {walls[False]}", file=sys.stderr)
        assert saved > 0, walls
        hand = tuning_s / saved  # production runs to pay back the tuning
        runs = tuning_s / v["saved_per_run_s"]  # the viability point before rounding up to whole runs
        assert v["runs"] == math.ceil(runs)
        assert 0.8 <= runs / hand <= 1.2, (runs, hand)
