"""I/O through the C library's streams (fopen, fwrite, fprintf, fread, fgets ...) and through duplicated
descriptors (dup, dup2, F_DUPFD) is counted, every byte once: the C library reaches open and write through
internal calls no POSIX wrapper sees, so a stdio-only program's report used to say no file I/O was seen."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MPICC, PROGRAMS, mpi, run_job

MiB = 1 << 20
OMPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


@pytest.fixture(scope="module")
def stdio_io(tmp_path_factory):
    exe = tmp_path_factory.mktemp("stdio_io") / "stdio_io"
    subprocess.run([MPICC, "-O2", "-D_FORTIFY_SOURCE=2", str(PROGRAMS / "stdio_io.c"), "-o", str(exe)], check=True)
    return exe


def phases_of(report, name: str, direction: str) -> dict:
    """The one phase of files named name.<rank>.* that wrote ("W") or read ("R")."""
    key = "bytes_written" if direction == "W" else "bytes_read"
    (p,) = [p for p in report.data_phases() if Path(p["file"]).name.startswith(f"{name}.") and p[key]]
    return p


def on_disk(out: Path, name: str) -> int:
    return sum(f.stat().st_size for f in out.glob(f"{name}.*"))


def check_stdio_job(report, out: Path):
    """What stdio_io.c's two ranks did, file by file, against the files on disk."""
    assert report.run["ranks"] == 2 and report.incomplete is None
    data_w, data_r = phases_of(report, "data", "W"), phases_of(report, "data", "R")
    assert data_w["bytes_written"] == on_disk(out, "data") == 8 * MiB
    assert data_w["data_level"] == "stdio" and data_w["stdio"]["write_calls"] == 8
    assert data_w["posix"]["write_calls"] == 0 and data_w["posix"]["bytes_written"] == 0  # not counted twice
    assert data_w["write_amplification"] is None  # stdio's own system calls are not seen
    assert data_r["bytes_read"] == 8 * MiB and data_r["stdio"]["read_calls"] == 8 and data_r["bytes_written"] == 0
    text_w, text_r = phases_of(report, "text", "W"), phases_of(report, "text", "R")
    # 100 fprintf, fputs, fputc, putc, fprintf; then 101 fgets, fgetc, getline, fscanf (the last newline unread)
    assert text_w["bytes_written"] == on_disk(out, "text") and text_w["stdio"]["write_calls"] == 2 * 104
    assert text_r["bytes_read"] == on_disk(out, "text") - 2 and text_r["stdio"]["read_calls"] == 2 * 104
    mixed = phases_of(report, "mixed", "W")  # write() then fdopen + fwrite on the same descriptor
    assert mixed["bytes_written"] == on_disk(out, "mixed") == 256 * 1024 and mixed["data_level"] == "posix"
    assert mixed["posix"]["bytes_written"] == mixed["stdio"]["bytes_written"] == 128 * 1024
    dup = phases_of(report, "dup", "W")  # a dup, printf on stdout dup2'ed onto it, the first descriptor
    assert dup["bytes_written"] == on_disk(out, "dup") == 2 * (32768 + 4096 + 16384)
    assert dup["posix"]["write_calls"] == 4 and dup["stdio"]["bytes_written"] == 2 * 4096
    assert not dup["open_at_exit"]  # dup2 back onto stdout closed the file's descriptor 1
    first, second = phases_of(report, "first", "W"), phases_of(report, "second", "W")  # freopen from one to the other
    assert first["bytes_written"] == on_disk(out, "first") and second["bytes_written"] == on_disk(out, "second")
    # stdout and stderr were written, and are no phase: every phase is a file of the job
    assert all(Path(p["file"]).parent == out for p in report.phases), [p["file"] for p in report.phases]
    assert len(report.data_phases()) == 8
    assert report.totals["bytes_written"] == sum(f.stat().st_size for f in out.iterdir())
    assert report.totals["bytes_read"] == 8 * MiB + on_disk(out, "text") - 2


@pytest.mark.mpi
def test_a_stdio_job_is_counted_byte_for_byte(tmp_path, stdio_io):
    out = tmp_path / "out"
    out.mkdir()
    result = run_job(mpi() + [stdio_io, out], report=tmp_path / "r.json")
    assert result.ok and result.report is not None, result.stderr
    assert result.report.section_version("stdio") == 1
    check_stdio_job(result.report, out)
    shown = subprocess.run(
        [sys.executable, "-m", "iotuner", "show", tmp_path / "r.json"], capture_output=True, text=True
    )
    assert shown.returncode == 0 and "stdio's not seen" in shown.stdout, shown.stderr  # system calls: not seen
    assert " stdio" in shown.stdout and "posix+stdio" in " ".join(shown.stdout.split())
    csv = subprocess.run(
        [sys.executable, "-m", "iotuner", "show", "--csv", tmp_path / "r.json"], capture_output=True, text=True
    ).stdout.splitlines()
    header = csv[0].split(",")
    rows = [dict(zip(header, line.split(","))) for line in csv[1:]]
    assert sum(int(r["stdio_bytes_written"]) for r in rows) == result.report.totals["bytes_written"] - 2 * (
        65536 + 32768 + 16384
    )  # every byte but the write() calls'
    advice = subprocess.run(
        [sys.executable, "-m", "iotuner", "advise", tmp_path / "r.json"], capture_output=True, text=True
    )
    assert "stdio-heavy" in advice.stdout, advice.stdout + advice.stderr  # advise reads the level, as Darshan's


@pytest.mark.mpi
def test_a_stdio_job_under_open_mpi(tmp_path):
    """The same program built with Open MPI: the runtime built for that ABI counts it alike."""
    from iotuner import native

    if not (shutil.which("mpicc.openmpi") and shutil.which("mpirun.openmpi")):
        pytest.skip("needs Open MPI (openmpi-bin, libopenmpi-dev)")
    if native.library_abi(native.runtime_library("openmpi")) != "openmpi":
        pytest.skip("no runtime built for Open MPI")
    exe = tmp_path / "stdio_io"
    subprocess.run(["mpicc.openmpi", "-O2", str(PROGRAMS / "stdio_io.c"), "-o", str(exe)], check=True)
    out = tmp_path / "out"
    out.mkdir()
    job = ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-n", "2", exe, out]
    result = run_job(job, report=tmp_path / "r.json", env=dict(os.environ, **OMPI_ROOT))
    assert result.ok and result.report is not None, result.stderr
    check_stdio_job(result.report, out)


def test_a_serial_program_writing_through_stdio_alone_has_its_report(tmp_path):
    """A serial program writes its report when it wrote a file: fwrite's bytes say so too."""
    src = tmp_path / "w.c"
    src.write_text(
        "#include <stdio.h>\n#include <string.h>\nint main(int argc, char **argv) {\n"
        '  static char buf[1 << 20]; memset(buf, 1, sizeof buf);\n  FILE *f = fopen(argv[1], "wb");\n'
        "  for (int i = 0; i < 4; i++) fwrite(buf, 1, sizeof buf, f);\n  return fclose(f);\n}\n"
    )
    exe = tmp_path / "w"
    subprocess.run(["gcc", "-O2", str(src), "-o", str(exe)], check=True)
    result = run_job([exe, tmp_path / "w.dat"], report=tmp_path / "r.json")
    assert result.ok and result.report is not None, result.stderr
    (p,) = result.report.data_phases()
    assert p["bytes_written"] == 4 * MiB and p["data_level"] == "stdio" and p["stdio"]["write_calls"] == 4


@pytest.mark.mpi
def test_a_forked_childs_stdio_counts_for_its_rank(tmp_path):
    """A rank's forked child writing through stdio: its bytes are in the children's total (the page they share
    reads the POSIX level, where a child's stream calls count), in no phase."""
    src = tmp_path / "fk.c"
    src.write_text(
        "#include <mpi.h>\n#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n#include <sys/wait.h>\n"
        "int main(int argc, char **argv) {\n  MPI_Init(&argc, &argv);\n  int rank;\n"
        "  MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n  static char buf[1 << 20];\n  memset(buf, 1, sizeof buf);\n"
        '  char path[4096];\n  snprintf(path, sizeof path, "%s/child.%d.dat", argv[1], rank);\n'
        '  pid_t pid = fork();\n  if (pid == 0) {\n    FILE *f = fopen(path, "wb");\n'
        "    fwrite(buf, 1, sizeof buf, f);\n    fclose(f);\n    _exit(0);\n  }\n  waitpid(pid, NULL, 0);\n"
        "  MPI_Finalize();\n  return 0;\n}\n"
    )
    exe = tmp_path / "fk"
    subprocess.run([MPICC, "-O1", str(src), "-o", str(exe)], check=True)
    result = run_job(mpi() + [exe, tmp_path], report=tmp_path / "r.json")
    assert result.ok and result.report is not None, result.stderr
    assert not result.report.data_phases()
    (note,) = [w for w in result.report.warnings if w.startswith("child processes of the job")]
    assert "wrote 2.0 MiB and read 0 bytes" in note


def test_dd_writes_through_a_duplicated_descriptor(tmp_path):
    """dd opens of= and moves it onto descriptor 1 (dup2): its writes are the file's."""
    dd = shutil.which("dd")
    if not dd:
        pytest.skip("no dd")
    target = tmp_path / "out.dat"
    result = run_job([dd, "if=/dev/zero", f"of={target}", "bs=64K", "count=16"], report=tmp_path / "r.json")
    assert result.ok and result.report is not None, result.stderr
    (p,) = result.report.data_phases()
    assert p["file"] == str(target) and p["bytes_written"] == MiB and p["posix"]["write_calls"] == 16


def test_a_fortran_program_is_counted_once(tmp_path):
    """gfortran's runtime writes with write() itself, not through stdio: its bytes are counted once."""
    if not shutil.which("gfortran"):
        pytest.skip("no gfortran")
    src = tmp_path / "f.f90"
    src.write_text(
        "program f\n"
        "  integer :: i\n"
        "  real(8) :: a(16384)\n"
        "  a = 1.0d0\n"
        "  open(10, file='u.dat', form='unformatted', access='stream', status='replace')\n"
        "  do i = 1, 8\n"
        "    write(10) a\n"
        "  end do\n"
        "  close(10)\n"
        "  open(11, file='t.txt', status='replace')\n"
        "  do i = 1, 100\n"
        "    write(11, '(a,i4)') 'line', i\n"
        "  end do\n"
        "  close(11)\n"
        "end program f\n"
    )
    exe = tmp_path / "f"
    subprocess.run(["gfortran", "-O1", str(src), "-o", str(exe)], check=True)
    result = run_job([exe], report=tmp_path / "r.json", cwd=tmp_path)
    assert result.ok and result.report is not None, result.stderr
    by_name = {Path(p["file"]).name: p for p in result.report.data_phases()}
    assert by_name["u.dat"]["bytes_written"] == (tmp_path / "u.dat").stat().st_size == 8 * 16384 * 8
    assert by_name["t.txt"]["bytes_written"] == (tmp_path / "t.txt").stat().st_size
    assert not any(p["stdio"]["write_calls"] for p in by_name.values())
