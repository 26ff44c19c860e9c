"""The viability point of a real study, against a hand calculation from runs this test times itself.

The program writes a shared file with collective calls, 4 ranks on 2 cores in /dev/shm: ROMIO's collective
buffering makes its write phase most of the run, and `romio_cb_write=disable` makes it several times faster
while hardly any of that time is inside POSIX calls (so an I/O share taken from the POSIX calls, as before,
put the viability point ~20x too far)."""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import mpi
from perf import Claim, assert_claims

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

RANKS = 4  # more ranks than cores: collective buffering's exchange spins, the write phase dominates the run
BLOCK, COUNT = 1 << 20, 48  # 48 MiB per rank


def iotuner(*args, **kw):
    return subprocess.run([sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, **kw)


def wall_s(command: list, env: dict, output: Path) -> float:
    """The whole program's wall time, measured here: no iotuner in the process. Its file is new, as in each of
    the study's runs (on tmpfs, writing a new file costs its pages too; overwriting one does not)."""
    output.unlink(missing_ok=True)
    start = time.monotonic()
    r = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    took = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    return took


def test_viability_point_matches_the_runs_saved_time(tmp_path, programs):
    space = tmp_path / "space.json"
    space.write_text(
        json.dumps({"name": "cb", "dimensions": [{"knob": "mpiio.romio_cb_write", "values": ["automatic", "disable"]}]})
    )
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

        # by hand: default and tuned runs of the whole program, timed here in interleaved pairs, the tuned ones
        # with the hint given to ROMIO directly (ROMIO_HINTS), so neither side depends on iotuner
        hints = tmp_path / "romio-hints"
        hints.write_text("romio_cb_write disable\n")
        command = mpi(RANKS) + [str(a).replace("{scratch}", scratch) for a in app]
        output = Path(scratch) / "shared.dat"
        default_env = {k: x for k, x in os.environ.items() if k != "ROMIO_HINTS"}
        tuned_env = {**default_env, "ROMIO_HINTS": str(hints)}

        def sample(i: int) -> dict:
            if i % 2 == 0:  # which side runs first alternates, so a drift hits both alike
                default, tuned = wall_s(command, default_env, output), wall_s(command, tuned_env, output)
            else:
                tuned, default = wall_s(command, tuned_env, output), wall_s(command, default_env, output)
            saved = max(default - tuned, 1e-3)
            print(f"pair {i}: default {default:.2f} s, tuned {tuned:.2f} s", file=sys.stderr)
            return {"viability over the hand calculation": v["runs"] / (tuning_s / saved)}

        # within 20% of tuning time / time saved per run
        assert_claims(sample, {"viability over the hand calculation": Claim(above=0.8, below=1.2)}, most=10)
