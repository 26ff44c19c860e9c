"""`iotuner run` and `iotuner smart` never stand between the user and the job: a report path, a settings path
or a log directory iotuner cannot use gives one warning, and the job runs (exit 0). The report path is
checked before the job starts; one that cannot take a file gives a temporary report path instead, and says
where. A report is this job's only when it carries this job's run id.

How the tests get 'read-only' as root (root writes through a directory's mode): a read-only bind mount of a
test directory onto itself; where mounting is not allowed, /sys (no file can be made there, even by root).
As another user, a directory of mode 0555."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import kernel, mpi
from iotuner import destinations, run_report, runner

pytestmark = pytest.mark.mpi

JOB = ("-b", "1M", "-t", "256K")


def iotuner(*args, cwd=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        env=env,
    )


def job(out: Path) -> list[str]:
    return [*mpi(), kernel("h5ior"), *JOB, "-o", str(out)]


def warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("iotuner: warning")]


def written_to(text: str) -> Path:
    found = re.search(r"report written to\s+(\S+)", text)
    assert found, text
    return Path(found.group(1))


def _unwritable(kind: str, tmp_path: Path, read_only: Path) -> Path:
    if kind == "read-only directory":
        with pytest.raises(OSError):  # the fixture is what it claims
            (read_only / "probe").write_text("x")
        return read_only / "r.json"
    if kind == "directory":
        return tmp_path
    if kind == "300-character name":
        return tmp_path / ("r" * 295 + ".json")
    if kind == "path over PATH_MAX":
        return tmp_path / "/".join(["d" * 200] * 21) / "r.json"
    if kind == "file where a directory goes":
        (tmp_path / "plain").write_text("not a directory\n")
        return tmp_path / "plain" / "r.json"
    raise AssertionError(kind)


KINDS = ["read-only directory", "directory", "300-character name", "path over PATH_MAX", "file where a directory goes"]


@pytest.mark.parametrize("kind", KINDS)
def test_run_with_an_unwritable_report_path_runs_the_job_with_one_warning(tmp_path, read_only_dir, kind):
    path = _unwritable(kind, tmp_path, read_only_dir)
    out = tmp_path / "out"
    out.mkdir()
    r = iotuner("run", "--report", path, "--", *job(out))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert (out / "h5ior.h5").stat().st_size >= 2 << 20  # the job ran and wrote its data
    said = warnings(r.stderr)
    assert len(said) == 1 and "the report goes to" in said[0], r.stderr
    instead = written_to(r.stdout)
    assert str(instead) in said[0] and instead != path
    rep = run_report.load(instead)  # the tables printed are this job's, from the report kept where the warning says
    assert rep.totals["bytes_written"] == 2 << 20
    shutil.rmtree(instead.parent)


def test_run_with_a_symlink_as_report_leaves_the_link_and_runs(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    link = tmp_path / "r.json"
    link.symlink_to(target)
    r = iotuner("run", "--report", link, "--", *job(tmp_path))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and target.read_text() == "keep me\n"  # neither deleted nor written through
    said = warnings(r.stderr)
    assert len(said) == 1 and "symbolic link" in said[0], r.stderr
    shutil.rmtree(written_to(r.stdout).parent)


def test_smart_with_an_unwritable_report_path_runs_the_job(tmp_path, read_only_dir):
    r = iotuner("smart", "--report", read_only_dir / "r.json", "--", *job(tmp_path))
    assert r.returncode == 0, r.stderr
    assert len(warnings(r.stderr)) == 1 and (tmp_path / "h5ior.h5").exists()
    shutil.rmtree(written_to(r.stdout).parent)


def test_json_out_with_an_unwritable_report_copy_keeps_the_json_out(tmp_path, read_only_dir):
    out = tmp_path / "run.json"
    r = iotuner("run", "--json-out", out, "--report", read_only_dir / "copy.json", "--", *job(tmp_path))
    assert r.returncode == 0, r.stderr
    said = warnings(r.stderr)
    assert len(said) == 1 and f"kept only at {out}" in said[0], r.stderr
    assert run_report.load(out).totals["bytes_written"] == 2 << 20


def test_a_symlink_loop_as_config_runs_the_job_untuned(tmp_path):
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop.name)
    r = iotuner("run", "--config", loop.name, "--report", "r.json", "--", *job(tmp_path), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    said = warnings(r.stderr)
    assert len(said) == 1 and "symbolic links" in said[0] and "runs untuned" in said[0], r.stderr
    assert run_report.load(tmp_path / "r.json").settings["status"] == "rejected"


def test_a_report_of_another_job_at_the_path_is_not_taken_for_this_jobs(tmp_path):
    """The job's command runs a second job with another run id on the same report path after its own: the
    report there is the other job's, and `iotuner run` says so instead of printing its numbers."""
    path = tmp_path / "r.json"
    mine, other = job(tmp_path / "a"), [*mpi(), kernel("h5ior"), "-b", "3M", "-t", "256K", "-o", str(tmp_path / "b")]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    script = " ".join(mine) + " && IOTUNER_RUN_ID=another-job " + " ".join(other)
    r = iotuner("run", "--report", path, "--", "sh", "-c", script)
    assert r.returncode == 0, r.stderr
    assert run_report.load(path).run["run_id"] == "another-job"  # the other job's report is there...
    assert "another job's (run id another-job)" in " ".join(r.stdout.split())
    assert "6.0 MiB" not in r.stdout and "report written" not in r.stdout  # ...and is not printed as this one's


def test_an_earlier_report_is_kept_until_the_job_writes_its_own(tmp_path):
    path = tmp_path / "r.json"
    first = iotuner("run", "--report", path, "--", *job(tmp_path))
    assert first.returncode == 0, first.stderr
    earlier = path.read_text()
    r = iotuner("run", "--report", path, "--", sys.executable, "-c", "pass")  # writes no report
    assert r.returncode == 0
    assert path.read_text() == earlier  # never deleted beforehand
    assert "is an earlier run's, not this job's" in " ".join(r.stdout.split())


def test_each_run_gets_its_own_run_id(tmp_path):
    ids = set()
    for i in range(2):
        r = runner.run(job(tmp_path), report=tmp_path / f"{i}.json", capture=True, timeout=180)
        assert r.report is not None, r.stderr
        ids.add(r.report.run["run_id"])
    assert len(ids) == 2 and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)


def test_a_read_only_logpath_is_named_with_its_reason(tmp_path, read_only_dir):
    env = runner.environment(None, None)
    env["IOTUNER_LOGPATH"] = str(read_only_dir)
    r = subprocess.run(job(tmp_path), env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    said = [line for line in r.stderr.splitlines() if "iotuner: warning" in line]
    assert len(said) == 1 and f"IOTUNER_LOGPATH {read_only_dir}: cannot make the directory" in said[0], r.stderr
    assert "No such file or directory" not in r.stderr


@pytest.mark.parametrize(
    "path, why",
    [
        ("", "empty"),
        ("/", "directory"),
        ("/proc/self/r.json", "no file can be made"),
        ("/nonexistent-dir/r.json", "does not exist"),
    ],
)
def test_why_unwritable_names_the_reason(path, why):
    assert why in destinations.why_unwritable(path)


def test_why_unwritable_accepts_a_writable_path_and_leaves_nothing_behind(tmp_path):
    (tmp_path / "old.json").write_text("{}")
    assert destinations.why_unwritable(tmp_path / "new.json") is None
    assert destinations.why_unwritable(tmp_path / "old.json") is None
    assert sorted(os.listdir(tmp_path)) == ["old.json"] and json.loads((tmp_path / "old.json").read_text()) == {}
