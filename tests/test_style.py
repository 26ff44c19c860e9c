"""The Python wing's habits: ruff's lint and format (configured in pyproject.toml) are clean."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TREES = ["python", "tests", "bench", "kernels", "scripts"]


def _ruff() -> list:
    exe = Path(sys.executable).with_name("ruff")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: pip install '.[test]' installs it")
    return [found]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_is_clean(command):
    run = subprocess.run(_ruff() + command + TREES, cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
