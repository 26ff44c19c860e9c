"""When the scratch disk fills in the middle of a study, the failed runs say so: 'No space left on device',
however deep in a two-rank HDF5 error stack the system said it (or whether a rank killed by the other's abort
got to print it at all).

The disk is real: a small tmpfs mounted for the test (root only; skipped elsewhere)."""

import os
import re
import subprocess
import sys

import pytest

from iotuner.tune import evaluate, printout

pytestmark = pytest.mark.mpi

APP = """#!/bin/sh
# the study's application: from its second run on, something else has filled the scratch file system
n=$(cat "{count}" 2>/dev/null || echo 0)
echo $((n + 1)) > "{count}"
if [ "$n" -ge 1 ] && [ ! -e "{disk}/filler" ]; then
  dd if=/dev/zero of="{disk}/filler" bs=64k 2>/dev/null
fi
exec mpiexec.mpich -n 2 vpicio -n 16K -o "$1"
"""


@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({r.stderr.strip()}): needs root")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_failed_trials_say_no_space_left_on_device(tmp_path, small_disk):
    app = tmp_path / "app.sh"
    app.write_text(APP.format(count=tmp_path / "count", disk=small_disk))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--launcher",
            "none",
            "--trials",
            "2",
            "--scratch",
            str(small_disk),
            "--out",
            str(tmp_path / "out"),
            "--",
            "sh",
            str(app),
            "{scratch}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = r.stdout.splitlines()
    assert any(" baseline (start): " in line for line in lines), r.stdout + r.stderr  # the first run had room
    failed = [i for i, line in enumerate(lines) if " trial " in line and " failed " in line]
    assert failed, r.stdout + r.stderr
    timed = [i for i, line in enumerate(lines) if re.match(r"\s*[\d.]+[smh]\s", line)] + [len(lines)]
    for i in failed:  # each failed trial's lines (wrapped to the width), down to the next timed line, say why
        said = " ".join(lines[i : min(j for j in timed if j > i)])
        assert "No space left on device" in said, said
        # a long path may be folded across lines: compare without the whitespace
        assert "".join(f"the scratch file system of {small_disk}".split()) in "".join(said.split()), said


def test_the_cause_is_taken_from_the_stderr(tmp_path):
    stderr = (
        "HDF5-DIAG: ...\n" * 50
        + "ADIOI_GEN_WRITECONTIG(80): Other I/O error Disk quota exceeded'\n"
        + "Abort(1) on node 0\n" * 20
    )
    assert evaluate.failure_cause(stderr, tmp_path, full=False) == "Disk quota exceeded"
    assert evaluate.failure_cause("Abort(1)", tmp_path, full=False) is None
    assert (
        evaluate.failure_cause("Abort(1)", tmp_path, full=True)
        == f"No space left on device (the scratch file system of {tmp_path} is full)"
    )
    assert not evaluate.scratch_full(tmp_path)


def test_the_error_line_keeps_the_cause_and_the_end_of_the_stderr():
    error = "exit status 1: No space left on device; stderr: " + "x" * 1000 + "the last words"
    line = printout.error_line(error)
    assert len(line) <= 300 and line.startswith("exit status 1: No space left on device; stderr: ...")
    assert line.endswith("the last words")
    assert printout.error_line("exit status 2; stderr: short") == "exit status 2; stderr: short"


def test_the_scratch_of_a_killed_worker_goes_when_a_session_ends(tmp_path):
    """A worker killed mid-trial leaves its runs' files; a session of the study on the same host removes them
    when it ends (not only when the next one starts), whether in a given --scratch or a temporary one."""
    import io
    import subprocess
    import sys
    from types import SimpleNamespace

    from rich.console import Console

    from iotuner.tune import session

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    given = tmp_path / "scratch"
    killed = given / f"w-vm-{gone.pid}"
    live = given / f"w-vm-{os.getpid()}"
    tmp_scratch = tmp_path / "iotuner-scratch-abc"
    for d in (killed / "trial-3", live / "trial-4", tmp_scratch / "trial-1"):
        d.mkdir(parents=True)
        (d / "data.h5").write_bytes(b"x" * 4096)
    workers = SimpleNamespace(
        session=SimpleNamespace(host="vm"), dead_sessions_here=lambda: [SimpleNamespace(scratch=str(tmp_scratch))]
    )
    store = SimpleNamespace(workers=workers)  # the store's workers view is all it reads
    out = io.StringIO()
    session.remove_left_scratch(store, Console(file=out), str(given))
    assert not killed.exists() and not tmp_scratch.exists()
    assert (live / "trial-4" / "data.h5").exists()  # this process's own runs stay
    assert "left by a stopped worker" in out.getvalue() and "left by a stopped tuner" in out.getvalue()
