"""`iotuner run` and `iotuner smart` exit as a shell reports the application's end: its own status, or
128 + the signal that killed it (143 for SIGTERM), and say which signal."""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import MPICC, MPIEXEC, PROGRAMS, mpi, run_job

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


# An MPI job whose ranks never reach MPI_Finalize is no success, whatever its launcher says: MPICH's mpiexec
# exits with 0 when every rank exited with 0 before MPI_Finalize, and at times when it was itself signalled.


@pytest.fixture(scope="module")
def early_exit(tmp_path_factory):
    exe = tmp_path_factory.mktemp("early_exit") / "early_exit"
    subprocess.run([MPICC, "-O1", str(PROGRAMS / "early_exit.c"), "-o", str(exe)], check=True)
    return exe


@pytest.mark.mpi
def test_mpich_itself_says_0_for_a_job_without_mpi_finalize(early_exit):
    """The premise: without iotuner, the launcher's status hides it."""
    r = subprocess.run(mpi() + [early_exit, "all"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("command", ["run", "smart"])
@pytest.mark.parametrize("mode", ["all", "one"])
def test_a_job_that_did_not_reach_mpi_finalize_is_no_success(tmp_path, early_exit, command, mode):
    r = iotuner(command, "--report", tmp_path / "r.json", "--", *mpi(), early_exit, mode)
    out = " ".join((r.stdout + r.stderr).split())  # the message as one line, however the console wrapped it
    assert r.returncode == 1, out
    found = re.search(r"did not reach MPI_Finalize on (\d+) of the (\d+) rank\(s\) that started MPI", out)
    assert found, out
    unfinished, started = map(int, found.groups())
    # as many as the ranks marked: hydra may kill the others the moment one leaves without MPI_Finalize
    assert 1 <= unfinished <= started <= 2 and (mode == "one" or unfinished == started), out
    assert "although its launcher exited with 0: exit status 1" in out
    assert not list(tmp_path.glob(".iotuner-*")), "the marks' file is removed"


@pytest.mark.mpi
def test_a_job_that_finished_and_a_serial_program_are_successes(tmp_path, early_exit):
    r = iotuner("run", "--report", tmp_path / "r.json", "--", *mpi(), early_exit, "finish")
    assert r.returncode == 0 and "did not reach MPI_Finalize" not in r.stdout + r.stderr, r.stdout + r.stderr
    serial = iotuner("run", "--report", tmp_path / "s.json", "--", sys.executable, "-c", "print(1)")
    assert serial.returncode == 0 and "did not reach MPI_Finalize on" not in serial.stdout + serial.stderr


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.mpi
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_launcher_is_no_success(tmp_path, early_exit, sig):
    ready = tmp_path / "ready"
    cmd = [sys.executable, "-m", "iotuner", "run", "--report", tmp_path / "r.json", "--", *mpi(), early_exit]
    proc = subprocess.Popen([*map(str, cmd), "wait", str(ready)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    launcher = None
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert ready.exists(), "the job never started"
        (launcher,) = children(proc.pid)
        os.kill(launcher, sig)  # the launcher alone, as a user or a scheduler might
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        if launcher is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(launcher, signal.SIGKILL)  # the job's own session: its ranks
        proc.wait()
    text = out.decode(errors="replace")
    assert proc.returncode != 0, text
    assert "did not reach MPI_Finalize on 2 of the 2 rank(s) that started MPI" in " ".join(text.split())


@pytest.mark.mpi
def test_a_trial_that_did_not_reach_mpi_finalize_fails(tmp_path, early_exit):
    from iotuner.tune import evaluate, launch, objective

    obj = objective.parse("regex:bandwidth=([0-9.]+)")
    ev = evaluate.JobEvaluator([str(early_exit), "all"], launch.make("local", 2, MPIEXEC), obj, tmp_path / "s")
    m = ev.evaluate({"version": 1}, "t0001-r1")
    assert not m.ok and m.value is None
    assert "did not reach MPI_Finalize" in m.error and "(exit status 0)" in m.error
    fine = evaluate.JobEvaluator([str(early_exit), "finish"], launch.make("local", 2, MPIEXEC), obj, tmp_path / "s")
    m = fine.evaluate({"version": 1}, "t0002-r1")
    assert m.ok and m.value == 1.0, m.error


@pytest.mark.mpi
def test_no_report_from_a_job_that_finished_does_not_blame_mpi_finalize(tmp_path, early_exit):
    """The runtime refuses a report path that is a symbolic link: the job finished, and the message says so."""
    (tmp_path / "r.json").symlink_to(tmp_path / "elsewhere.json")  # dangling: nothing there to read
    result = run_job(mpi() + [early_exit, "finish"], report=tmp_path / "r.json")
    assert result.ok and result.report is None
    assert "did not reach MPI_Finalize" not in result.report_error
    assert "although all 2 rank(s) reached MPI_Finalize" in result.report_error, result.report_error


def test_the_marks_are_read_as_the_ranks_wrote_them(tmp_path):
    """A byte per rank at its rank's offset: 'S' at MPI_Init, 'F' at MPI_Finalize, a hole for a rank that
    marked nothing (one the launcher killed first, or another node's, when the file is not shared)."""
    from iotuner import runner

    marks = runner.finalize_marks(tmp_path / "r.json", "someid")
    assert marks is not None and marks.parent == tmp_path and marks.stat().st_size == 0
    with open(marks, "r+b") as f:
        for rank, mark in ((0, b"F"), (1, b"S"), (3, b"F"), (5, b"S")):
            f.seek(rank)
            f.write(mark)
    result = runner.RunResult(["job"], 0, 1.0, None, runner.NO_REPORT)
    runner.read_finalize_marks(marks, result)
    assert (result.mpi_ranks, result.unfinished_ranks) == (4, 2) and not result.ok and result.exit_status == 1
    assert not marks.exists()
    assert "did not reach MPI_Finalize on 2 of the 4 rank(s)" in result.report_error


def test_marks_left_by_a_killed_iotuner_are_removed_by_the_next(tmp_path):
    """SIGKILL leaves the marks file beside the report: the next run there removes it when its process is gone,
    and leaves a live process's and another host's alone."""
    from iotuner import runner

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = runner.host_name()
    left = tmp_path / f".iotuner-{host}-{gone.pid}-a.ranks"
    live = tmp_path / f".iotuner-{host}-{os.getpid()}-b.ranks"
    other = tmp_path / f".iotuner-otherhost-{gone.pid}-c.ranks"
    for p in (left, live, other):
        p.write_bytes(b"S")
    marks = runner.finalize_marks(tmp_path / "r.json", "someid")
    assert marks is not None and marks.exists()
    assert not left.exists() and live.exists() and other.exists()
    killed = subprocess.Popen(
        [sys.executable, "-m", "iotuner", "run", "--report", tmp_path / "k.json", "--", "sleep", "30"],
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob(f".iotuner-{host}-{killed.pid}-*.ranks")) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(killed.pid, signal.SIGKILL)  # iotuner and its job, as a batch system's kill would
    killed.wait()
    assert list(tmp_path.glob(f".iotuner-{host}-{killed.pid}-*.ranks")), "a killed iotuner leaves its marks"
    runner.finalize_marks(tmp_path / "r2.json", "other")
    assert not list(tmp_path.glob(f".iotuner-{host}-{killed.pid}-*.ranks"))


def test_a_slurm_job_script_names_the_marks_file(tmp_path):
    from iotuner.tune import study_config as cfg
    from iotuner.tune.launch import slurm

    launcher = slurm.Slurm(2, cfg.SlurmSpec())
    marks = tmp_path / ".iotuner-x.ranks"
    script = launcher.batch_script(["app"], config=None, report=tmp_path / "r.json", cwd=tmp_path, marks=marks)
    assert f"IOTUNER_FINALIZE_FILE={marks}" in script
