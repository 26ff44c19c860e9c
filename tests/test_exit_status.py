"""`iotuner run` and `iotuner smart` exit as a shell reports the application's end: its own status, or
128 + the signal that killed it (143 for SIGTERM), and say which signal."""

import subprocess
import sys

import pytest

KILL_ITSELF = "import os, signal, sys; os.kill(os.getpid(), getattr(signal, sys.argv[1]))"


def iotuner(*args):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("command", ["run", "smart"])
@pytest.mark.parametrize("sig, status", [("SIGTERM", 143), ("SIGKILL", 137), ("SIGSEGV", 139)])
def test_a_signal_killed_application_gives_128_plus_the_signal(tmp_path, command, sig, status):
    r = iotuner(command, "--report", tmp_path / "r.json", "--", sys.executable, "-c", KILL_ITSELF, sig)
    assert r.returncode == status, (r.returncode, r.stdout, r.stderr)
    number = status - 128
    assert f"killed by signal {number} ({sig}): exit status {status}" in r.stdout + r.stderr


@pytest.mark.parametrize("command", ["run", "smart"])
def test_the_applications_own_status_passes_through(tmp_path, command):
    r = iotuner(command, "--", sys.executable, "-c", "import sys; sys.exit(3)")
    assert r.returncode == 3 and "the application exited with status 3" in r.stdout, r.stdout
    ok = iotuner(command, "--", sys.executable, "-c", "pass")
    assert ok.returncode == 0 and "exited with status" not in ok.stdout
