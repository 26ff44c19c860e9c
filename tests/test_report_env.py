"""Darshan-like conventions of the runtime: a log directory, excluded directories, job metadata, hint sources."""

import json
import os
import subprocess
import sys

import pytest

from conftest import kernel, mpi, run_job
from iotuner import report, runner

pytestmark = pytest.mark.mpi


def test_logpath_names_reports_by_user_executable_job_and_time(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    hints = tmp_path / "romio_hints"
    hints.write_text("romio_cb_write enable\n")
    env = runner.environment(None, tmp_path / "unused.json")
    env.pop("IOTUNER_REPORT")
    env.update(IOTUNER_LOGPATH=str(logs), SLURM_JOB_ID="4242", SLURM_STEP_ID="3", USER="alice",
               ROMIO_HINTS=str(hints), MPICH_MPIIO_HINTS="*.h5:cb_nodes=1")
    r = subprocess.run([*mpi(), kernel("h5ior"), "-b", "1M", "-t", "256K", "-o", str(tmp_path)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    written = list(logs.iterdir())
    assert len(written) == 1  # one report for the job, from rank 0
    name = written[0].name
    assert name.startswith("alice_h5ior_id4242_") and name.endswith(".json")
    run = report.load(written[0]).run
    assert run["user"] == "alice" and run["executable"].endswith("/h5ior")
    assert run["scheduler"] == "slurm" and run["job_id"] == "4242" and run["job_step"] == "3"
    assert run["hint_sources"] == {"ROMIO_HINTS": str(hints), "MPICH_MPIIO_HINTS": "*.h5:cb_nodes=1"}
    files = [p["file"] for p in report.load(written[0]).phases]
    assert files == [str(tmp_path / "h5ior.h5")]  # the hints file is never a phase
    shown = subprocess.run([sys.executable, "-m", "iotuner", "show", str(written[0])], capture_output=True, text=True)
    assert "job: user alice, slurm job 4242" in shown.stdout
    assert f"hints from the environment: ROMIO_HINTS={hints}, MPICH_MPIIO_HINTS=*.h5:cb_nodes=1" in shown.stdout


def test_excluded_directories_are_neither_measured_nor_tuned(tmp_path):
    out, other = tmp_path / "skip", tmp_path / "keep"
    cfg = tmp_path / "s.json"
    cfg.write_text('{"version": 1, "mpiio": {"romio_cb_write": "disable"}}')
    for d in (out, other):
        r = run_job([*mpi(), kernel("h5ior"), "-b", "1M", "-t", "256K", "-o", d], config=cfg,
                    report=tmp_path / f"{d.name}.json", env=dict(os.environ, IOTUNER_EXCLUDE_DIRS=f"/nonexistent,{out}"))
        assert r.returncode == 0 and r.report is not None, r.stderr
    assert report.load(tmp_path / "skip.json").phases == []
    kept = report.load(tmp_path / "keep.json")
    assert [p["file"] for p in kept.phases] == [str(other / "h5ior.h5")]
    assert kept.checks("mpiio", "romio_cb_write")[0]["status"] == "applied"
    assert (out / "h5ior.h5").stat().st_size > 0  # the application's data is written all the same


def test_a_run_outside_a_job_says_so(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "LSB_", "FLUX_", "COBALT_"))}
    r = run_job([*mpi(), kernel("h5ior"), "-b", "1M", "-t", "256K", "-o", tmp_path], report=tmp_path / "r.json",
                env=env)
    run = r.report.run
    assert run["job_id"] is None and run["scheduler"] is None and json.dumps(run["hint_sources"]) == "{}"
