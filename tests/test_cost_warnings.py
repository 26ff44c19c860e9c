"""`iotuner check` warns about legal values that make a job slow by rounds of exchanges: a small collective buffer,
ROMIO's (mpiio.cb_buffer_size) or OMPIO's (ompio.bytes_per_agg), measured 10x slower at 4096 bytes."""

import json
import subprocess
import sys

import pytest


def check(tmp_path, doc):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    return subprocess.run([sys.executable, "-m", "iotuner", "check", path], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("layer, knob", [("mpiio", "cb_buffer_size"), ("ompio", "bytes_per_agg")])
def test_a_small_collective_buffer_gets_a_cost_warning(tmp_path, layer, knob):
    small = check(tmp_path, {"version": 1, layer: {knob: 4096}})
    assert small.returncode == 0, small.stderr
    assert f"{layer}.{knob}: a collective buffer of 4096 bytes" in small.stdout + small.stderr
    assert "262144" in small.stdout + small.stderr  # the rounds of a 1 GiB write: 1 GiB / 4096
    usual = check(tmp_path, {"version": 1, layer: {knob: "4M"}})
    assert usual.returncode == 0 and "collective buffer of" not in usual.stdout + usual.stderr
