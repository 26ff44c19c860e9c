"""Bounded work: `iotuner simulate` estimates memory and time before anything is built for the ranks and
refuses (exit 2, with the estimate) what this machine cannot hold; the simulator's own error output is shown
in full. No timing here: the refusal must come before the work, so the test gives the command a budget far
below what building a billion ranks would take (it ran out of memory before)."""

import subprocess
import sys
from pathlib import Path

import pytest

from iotuner.simulate import engine

REPORT = str(Path(__file__).parent / "data" / "bad_run_report.json")


def test_a_billion_ranks_are_refused_with_the_estimate():
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "simulate", REPORT, "--platform", "hopper", "--ranks", "1000000000"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith("iotuner simulate: --ranks 1000000000: 1,000,000,000 ranks need about")
    assert "GiB" in line and "available" in line


def test_the_refusal_follows_the_machine(monkeypatch):
    monkeypatch.setattr(engine, "_available_bytes", lambda: 64 << 30)
    monkeypatch.setattr(engine, "_max_maps", lambda: 65530)
    assert engine.refusal(64) is None
    assert "vm.max_map_count (65,530)" in engine.refusal(100_000)  # SimGrid's abort at 100,000 ranks, foreseen
    monkeypatch.setattr(engine, "_max_maps", lambda: 10**9)
    assert "more than the 10 min a simulation may take" in engine.refusal(100_000)
    monkeypatch.setattr(engine, "_available_bytes", lambda: 1 << 30)
    assert "has 1.0 GiB available" in engine.refusal(100_000)


def test_the_simulators_error_is_shown_in_full(tmp_path, monkeypatch):
    fake = tmp_path / "iosim"
    fake.write_text(
        "#!/bin/sh\necho 'first: what went wrong' >&2\necho 'second: where' >&2\n"
        "echo 'third: backtrace line' >&2\nexit 134\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(engine, "executable", lambda: str(fake))
    with pytest.raises(engine.SimulateError) as e:
        engine.run_engine("{}")
    text = str(e.value)
    assert "exit 134" in text and all(f"{w}:" in text for w in ("first", "second", "third"))


def test_an_empty_platform_is_named_as_such():
    """`--platform ''` used to be "Is a directory: '.'" (the empty path is the working directory)."""
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "simulate", REPORT, "--platform", "", "--ranks", "4"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    line = r.stderr.strip()
    assert "\n" not in line and "the platform is empty" in line and "Is a directory" not in line
