"""The run report is written safely: in a shared directory, a file or a symbolic link planted at the report's
temporary name is never written through, and a report path that is itself a symbolic link is refused."""

import json
import subprocess

import pytest

from iotuner import runner

pytestmark = pytest.mark.mpi


def _serial(programs, tmp_path, report, shell_before=""):
    """The serial HDF5 test program under the runtime; shell_before runs in the shell that then becomes the
    program (exec keeps the pid, so $$ is the program's pid)."""
    env = dict(runner.environment(None, report), IOTUNER_REPORT=str(report))  # as given, not resolved
    script = f'{shell_before}\nexec "$0" "$1"'
    return subprocess.run(
        ["sh", "-c", script, str(programs["serial_h5"]), str(tmp_path / "data.h5")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_symlink_planted_at_the_temporary_name_is_not_followed(tmp_path, programs):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    report = tmp_path / "report.json"
    r = _serial(programs, tmp_path, report, f'ln -s "{target}" "{report}.tmp.$$"')
    assert r.returncode == 0, r.stderr
    assert target.read_text() == "keep me\n"  # the link's target is untouched
    planted = [p for p in tmp_path.iterdir() if p.name.startswith("report.json.tmp.")]
    assert len(planted) == 1 and planted[0].is_symlink()  # the planted link is left alone, ours is gone
    assert json.loads(report.read_text())["kind"] == "iotuner-run-report"  # written under another name


def test_a_file_planted_at_the_temporary_name_is_not_overwritten(tmp_path, programs):
    report = tmp_path / "report.json"
    r = _serial(programs, tmp_path, report, f'echo mine > "{report}.tmp.$$"')
    assert r.returncode == 0, r.stderr
    planted = [p for p in tmp_path.iterdir() if p.name.startswith("report.json.tmp.")]
    assert len(planted) == 1 and planted[0].read_text() == "mine\n"
    assert json.loads(report.read_text())["kind"] == "iotuner-run-report"


def test_a_symlinked_report_path_is_refused_with_a_warning(tmp_path, programs):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    report = tmp_path / "report.json"
    report.symlink_to(target)
    r = _serial(programs, tmp_path, report)
    assert r.returncode == 0, r.stderr
    assert target.read_text() == "keep me\n" and report.is_symlink()
    assert r.stderr.count("iotuner: warning") == 1 and "is a symbolic link; not written" in r.stderr
    assert not [p for p in tmp_path.iterdir() if ".tmp." in p.name]


@pytest.mark.parametrize("length", [255, 250])
def test_a_legal_report_name_of_any_length_is_written(tmp_path, programs, length):
    """ "<name>.tmp.<pid>" does not fit beside a name of up to 255 bytes: the temporary file takes a short name
    of its own in the same directory, and is gone afterwards."""
    report = tmp_path / ("r" * (length - 5) + ".json")
    r = _serial(programs, tmp_path, report)
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    assert json.loads(report.read_text())["kind"] == "iotuner-run-report"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["data.h5", report.name])
