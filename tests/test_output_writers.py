"""Output writers on a target they cannot write (a read-only directory, a directory in the file's place): one
clear line naming the target and the reason, exit status 2, no traceback; calibrate and tune say so before
any benchmark or run starts. 'Read-only' as conftest's read_only_dir makes it."""

import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
REPORT = str(DATA / "bad_run_report.json")


def iotuner(*args):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, timeout=300
    )


WRITERS = {
    "report -o": lambda out: ["report", REPORT, "-o", out],
    "advise -o": lambda out: ["advise", REPORT, "-o", out],
    "simulate --save-platform": lambda out: ["simulate", REPORT, "--platform", "hopper", "--save-platform", out],
    "calibrate --output": lambda out: ["calibrate", "--output", out],
}


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("target", ["read-only directory", "directory"])
def test_a_writer_names_a_target_it_cannot_write(tmp_path, read_only_dir, writer, target):
    out = read_only_dir / "out.file" if target == "read-only directory" else tmp_path
    r = iotuner(*WRITERS[writer](out))
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert str(out) in lines[0] and ("directory" in lines[0] or "Read-only" in lines[0] or "denied" in lines[0])
    assert "micro-benchmarks" not in r.stdout  # calibrate refuses before measuring


@pytest.mark.mpi
@pytest.mark.parametrize("target", ["read-only directory", "file"])
def test_tune_scratch_it_cannot_use_is_one_line(tmp_path, read_only_dir, target):
    scratch = read_only_dir if target == "read-only directory" else tmp_path / "plain"
    if target == "file":
        scratch.write_text("a file\n")
    r = iotuner(
        "tune",
        "--trials",
        "1",
        "--scratch",
        scratch,
        "--out",
        tmp_path / "study",
        "--",
        "h5ior",
        "-b",
        "1M",
        "-o",
        "{scratch}",
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(f"iotuner tune: --scratch {scratch}: cannot make")
    assert "baseline" not in r.stdout


def test_write_atomic_leaves_nothing_behind_on_failure(tmp_path):
    from iotuner import files

    (tmp_path / "d").mkdir()
    with pytest.raises(files.OutputError, match="it is a directory"):
        files.write_atomic(tmp_path / "d", "x")
    assert [p.name for p in tmp_path.iterdir()] == ["d"] and not list((tmp_path / "d").iterdir())
