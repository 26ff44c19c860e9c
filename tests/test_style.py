"""The Python wing's habits: ruff's lint and format, and mypy on the tuner's engine and study storage (all configured
in pyproject.toml), are clean."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TREES = ["python", "tests", "bench", "kernels", "scripts"]


def _tool(name: str) -> list:
    exe = Path(sys.executable).with_name(name)
    if exe.exists():
        return [str(exe)]
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install '.[test]' installs it")
    return [found]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_is_clean(command):
    run = subprocess.run(_tool("ruff") + command + TREES, cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_types_are_clean():
    """mypy on the files pyproject.toml's [tool.mypy] names (the tuner's engine and its study storage)."""
    run = subprocess.run(_tool("mypy"), cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
