"""A forked child's I/O is in no phase (its memory is a copy, and with _exit no destructor runs), but the report
says how much it was: its rank counts its children's POSIX calls in a page they share, and rank 0 warns with the
job's total. A child never writes the report in its parent's place."""

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


def forked_warnings(report):
    return [w for w in report.warnings if w.startswith("forked child processes")]


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
