"""Darshan-like conventions of the runtime: a log directory, excluded directories, job metadata, hint sources."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import kernel, mpi, run_job
from iotuner import run_report, runner

pytestmark = pytest.mark.mpi


def test_logpath_names_reports_by_user_executable_job_and_time(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    logs.chmod(0o1777)  # a site's shared log directory
    hints = tmp_path / "romio_hints"
    hints.write_text("romio_cb_write enable\n")
    env = runner.environment(None, tmp_path / "unused.json")
    env.pop("IOTUNER_REPORT")
    env.update(
        IOTUNER_LOGPATH=str(logs),
        SLURM_JOB_ID="4242",
        SLURM_STEP_ID="3",
        USER="alice",
        ROMIO_HINTS=str(hints),
        MPICH_MPIIO_HINTS="*.h5:cb_nodes=1",
    )
    r = subprocess.run(
        [*mpi(), kernel("h5ior"), "-b", "1M", "-t", "256K", "-o", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    written = [p for p in logs.rglob("*") if p.is_file()]
    assert len(written) == 1  # one report for the job, from rank 0
    name = written[0].name
    assert name.startswith("alice_h5ior_id4242_") and name.endswith(".json")
    # filed by the job's day as Darshan files its logs: YEAR/MONTH/DAY, unpadded, in directories as shared as
    # the log directory
    year, month, day = name.split("_")[3].split("T")[0].split("-")
    assert written[0].parent == logs / year / str(int(month)) / str(int(day))
    for d in (logs / year, logs / year / str(int(month)), written[0].parent):
        assert d.stat().st_mode & 0o7777 == 0o1777
    run = run_report.load(written[0]).run
    assert run["user"] == "alice" and run["executable"].endswith("/h5ior")
    assert run["scheduler"] == "slurm" and run["job_id"] == "4242" and run["job_step"] == "3"
    assert run["hint_sources"] == {"ROMIO_HINTS": str(hints), "MPICH_MPIIO_HINTS": "*.h5:cb_nodes=1"}
    files = [p["file"] for p in run_report.load(written[0]).phases]
    assert files == [str(tmp_path / "h5ior.h5")]  # the hints file is never a phase
    shown = subprocess.run([sys.executable, "-m", "iotuner", "show", str(written[0])], capture_output=True, text=True)
    assert "job: user alice, slurm job 4242" in shown.stdout
    # this MPICH reads ROMIO_HINTS (read back from the file, not set by iotuner) and not Cray's MPICH_MPIIO_HINTS
    text = " ".join(shown.stdout.split())
    assert text.count("(ignored by this MPI") == 1 and "hints from the environment: ROMIO_HINTS=" in text
    assert re.search(
        r"MPICH_MPIIO_HINTS=\*\.h5:cb_nodes=1 \(ignored by this MPI \(MPICH Version: \d+\.\d+\.\d+\): "
        r"Cray MPICH reads it\)",
        text,
    )  # 4.0.2 on Debian 12, 4.2.1 on 13
    assert run_report.load(written[0]).phases[0]["mpi_hints"]["romio_cb_write"] == "enable"


def test_which_mpi_reads_which_hint_variable():
    from iotuner.hints import environment_sources

    env = {"ROMIO_HINTS": "/h", "MPICH_MPIIO_HINTS": "*:cb_nodes=2"}
    verdicts = lambda lib, **more: [
        why is None
        for _, _, why in environment_sources(  # noqa: E731
            {"mpi_library": lib, "hint_sources": {**env, **more}}
        )
    ]
    assert verdicts("MPICH Version:\t4.0.2") == [True, False]
    assert verdicts("MPI VERSION    : CRAY MPICH version 8.1.25.17 (ANL base 3.4a2)") == [True, True]
    assert verdicts("Open MPI v4.1.4, package: Debian OpenMPI") == [False, False]
    assert verdicts("Open MPI v4.1.4", OMPI_MCA_io="romio321") == [True, False, True]
    assert verdicts("") == [True, True]  # no library known: nothing is called ignored


def test_excluded_directories_are_neither_measured_nor_tuned(tmp_path):
    out, other = tmp_path / "skip", tmp_path / "keep"
    cfg = tmp_path / "s.json"
    cfg.write_text('{"version": 1, "mpiio": {"romio_cb_write": "disable"}}')
    for d in (out, other):
        r = run_job(
            [*mpi(), kernel("h5ior"), "-b", "1M", "-t", "256K", "-o", d],
            config=cfg,
            report=tmp_path / f"{d.name}.json",
            env=dict(os.environ, IOTUNER_EXCLUDE_DIRS=f"/nonexistent,{out}"),
        )
        assert r.returncode == 0 and r.report is not None, r.stderr
    assert run_report.load(tmp_path / "skip.json").phases == []
    kept = run_report.load(tmp_path / "keep.json")
    assert [p["file"] for p in kept.phases] == [str(other / "h5ior.h5")]
    assert kept.checks("mpiio", "romio_cb_write")[0]["status"] == "applied"
    assert (out / "h5ior.h5").stat().st_size > 0  # the application's data is written all the same


def test_a_run_outside_a_job_says_so(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "LSB_", "FLUX_", "COBALT_"))}
    r = run_job(
        [*mpi(), kernel("h5ior"), "-b", "1M", "-t", "256K", "-o", tmp_path], report=tmp_path / "r.json", env=env
    )
    run = r.report.run
    assert run["job_id"] is None and run["scheduler"] is None and json.dumps(run["hint_sources"]) == "{}"
