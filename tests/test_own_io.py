"""iotuner's own files (the settings document, the run report and its temporary file) are read and written with
raw system calls: a tool preloaded beside it that records the application's I/O (Darshan) never sees them."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import mpi, run_job, write_json

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="module")
def spy(tmp_path_factory) -> Path:
    lib = tmp_path_factory.mktemp("spy") / "libspy.so"
    subprocess.run(
        ["gcc", "-O1", "-Wall", "-shared", "-fPIC", str(PROGRAMS / "spy_preload.c"), "-o", str(lib), "-ldl"], check=True
    )
    return lib


@pytest.mark.mpi
def test_a_preloaded_tool_sees_the_applications_files_and_none_of_iotuners(tmp_path, programs, spy):
    cfg = write_json(tmp_path / "settings.json", {"version": 1, "mpiio": {"cb_buffer_size": "4M"}})
    log = tmp_path / "spy.log"
    data = tmp_path / "d.bin"
    env = dict(os.environ, LD_PRELOAD=str(spy), SPY_LOG=str(log))  # iotuner is preloaded before it
    result = run_job(
        mpi() + [programs["mpiio_write"], data, 4096, 4, "collective"], config=cfg, report=tmp_path / "r.json", env=env
    )
    assert result.ok, result.stdout + result.stderr
    [check] = [c for c in result.report.checks() if c["knob"] == "cb_buffer_size"]  # the document was read
    assert check["status"] == "applied"
    seen = log.read_text().splitlines()
    assert any(line.endswith(f" {data}") for line in seen), seen  # the tool does see the application's file
    ours = [line for line in seen if "settings.json" in line or "r.json" in line or ".iotuner-report" in line]
    assert ours == [], ours
