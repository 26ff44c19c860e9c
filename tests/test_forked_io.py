"""A forked child's I/O is in no phase (its memory is a copy, and with _exit no destructor runs), but the report
says how much it was: its rank counts its children's POSIX calls in a page they share, and rank 0 warns with the
job's total. The programs a rank runs (system, popen, posix_spawn, fork and exec) count into the same page. A
child never writes the report in its parent's place, and a wrapper script's ranks are ranks, not children."""

import subprocess
import sys

import pytest

from conftest import MPICC, PROGRAMS, mpi, run_job

MiB = 1 << 20


@pytest.fixture(scope="module")
def fork_io(tmp_path_factory):
    exe = tmp_path_factory.mktemp("fork_io") / "fork_io"
    subprocess.run([MPICC, "-O1", str(PROGRAMS / "fork_io.c"), "-o", str(exe)], check=True)
    return exe


@pytest.fixture(scope="module")
def run_children(tmp_path_factory):
    exe = tmp_path_factory.mktemp("run_children") / "run_children"
    subprocess.run([MPICC, "-O1", str(PROGRAMS / "run_children.c"), "-o", str(exe)], check=True)
    return exe


def forked_warnings(report):
    return [w for w in report.warnings if w.startswith("child processes of the job")]


@pytest.mark.mpi
@pytest.mark.parametrize("how", ["_exit", "exit"])
def test_the_report_says_how_much_the_forked_children_wrote(tmp_path, fork_io, how):
    result = run_job(mpi() + [fork_io] + (["exit"] if how == "exit" else []) + [tmp_path], report=tmp_path / "r.json")
    assert result.ok and result.report is not None, result.stderr
    on_disk = sum(f.stat().st_size for f in tmp_path.glob("*.dat"))
    assert on_disk == 4 * MiB  # 1 MiB per rank and 1 MiB per child
    assert result.report.totals["bytes_written"] == 2 * MiB  # the ranks' own, in their phases
    (note,) = forked_warnings(result.report)
    assert "wrote 2.0 MiB and read 0 bytes that no phase of this report holds" in note


def test_a_serial_programs_child_is_counted_and_writes_no_report(tmp_path):
    child = (
        "import os, sys\n"
        "open(sys.argv[1] + '/parent.dat', 'wb').write(b'p' * 65536)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    open(sys.argv[1] + '/child.dat', 'wb').write(b'c' * 1048576)\n"
        "    sys.exit(0)\n"  # a normal exit: destructors run, and used to write a report of the child's own
        "os.waitpid(pid, 0)\n"
    )
    result = run_job([sys.executable, "-B", "-c", child, tmp_path], report=tmp_path / "r.json")
    assert result.ok and result.report is not None, result.stderr
    files = [p["file"].rsplit("/", 1)[-1] for p in result.report.data_phases()]
    assert "parent.dat" in files and "child.dat" not in files, files  # the parent's report, not the child's
    (note,) = forked_warnings(result.report)
    assert "wrote 1.0 MiB and read 0 bytes" in note


def test_a_job_without_children_has_no_such_note(tmp_path):
    result = run_job(
        [sys.executable, "-c", f"open('{tmp_path}/a.dat', 'wb').write(b'x' * 4096)"], report=tmp_path / "r.json"
    )
    assert result.ok and result.report is not None and not forked_warnings(result.report)


@pytest.mark.mpi
@pytest.mark.parametrize("how", ["system", "popen", "spawn", "exec"])
def test_the_programs_a_rank_runs_are_counted_for_it(tmp_path, run_children, how):
    """Each rank writes 1 MiB and runs a program (this executable, linked with MPI but not starting it) that
    writes 512 KiB: the ranks' phases hold their own 2 MiB, the note the programs' 1 MiB, and the programs
    neither write a report of their own nor call the job incomplete."""
    result = run_job(mpi() + [run_children, how, tmp_path], report=tmp_path / "r.json")
    assert result.ok and result.report is not None, result.stderr
    assert sum(f.stat().st_size for f in tmp_path.glob("child*.dat")) == MiB
    assert result.report.incomplete is None and result.report.run["ranks"] == 2
    phases = result.report.data_phases()  # one phase of the ranks' like-named files
    assert [(p["file"].rsplit("/", 1)[-1], p["ranks"], p["bytes_written"]) for p in phases] == [
        ("rank0.dat", 2, 2 * MiB)
    ]
    (note,) = forked_warnings(result.report)
    assert "wrote 1.0 MiB" in note, note
    assert result.stderr.count("warning") == 1, result.stderr  # the note, and nothing of the programs


@pytest.mark.mpi
def test_a_wrapper_scripts_ranks_are_ranks(tmp_path, run_children):
    """mpiexec runs a shell that runs the program: the shell forks (its page is its own), and the ranks it
    runs must not take it for their parent's children: both ranks' phases are in the report, no note."""
    script = f"'{run_children}' write '{tmp_path}/pre.dat' 4096; exec '{run_children}' system '{tmp_path}'"
    result = run_job(mpi() + ["sh", "-c", script], report=tmp_path / "r.json")
    assert result.ok and result.report is not None, result.stderr
    assert result.report.run["ranks"] == 2
    phases = result.report.data_phases()
    assert [(p["file"].rsplit("/", 1)[-1], p["ranks"], p["bytes_written"]) for p in phases] == [
        ("rank0.dat", 2, 2 * MiB)
    ]
    (note,) = forked_warnings(result.report)  # the ranks' own programs, counted for them
    assert "wrote 1.0 MiB" in note, note
