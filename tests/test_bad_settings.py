"""A bad settings file never hurts the job: one warning from rank 0, exit
code 0, the same output as an untuned run, and a report that says why."""

import json
import os
import subprocess

import pytest

from conftest import h5diff, kernel, mpi, run_job, write_json

pytestmark = pytest.mark.mpi

FIFO = object()  # the settings "file" is a FIFO nobody writes to: reading it would block every rank

CASES = {
    "malformed": ('{"version": 1, "hdf5": {"alignment": [0, 4096],}}', "not valid JSON: line 1"),
    "unknown_knob": ('{"version": 1, "hdf5": {"alignmnet": [0, 4096]}}', "did you mean hdf5.alignment"),
    "wrong_type": ('{"version": 1, "mpiio": {"cb_nodes": "two"}}', 'cb_nodes: expected a whole number, got "two"'),
    "missing": (None, "cannot read settings file"),
    # the first value of a repeated key would be lost without a word
    "repeated_key": ('{"version": 1, "hdf5": {"alignmnet": [0, 4096]},\n "hdf5": {"alignment": [0, 4096]}}',
                     "line 2, column 2: key 'hdf5' appears twice"),
    # written raw into the report, bytes that are not UTF-8 made every reader of it fail
    "invalid_utf8": (b'{"version": 1, "mpiio": {"cb_config_list": "*:2\xff"}}', "invalid UTF-8 in string"),
    "fifo": (FIFO, "is not a regular file (a FIFO)"),
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference")
    r = subprocess.run(mpi() + [kernel("vpicio"), "-n", "64K", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out / "vpicio.h5"


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_settings_run_untuned(tmp_path, reference, case):
    text, expected = CASES[case]
    cfg = tmp_path / "settings.json"
    if text is FIFO:
        os.mkfifo(cfg)
    elif isinstance(text, bytes):
        cfg.write_bytes(text)
    elif text is not None:
        write_json(cfg, text)
    result = run_job(mpi() + [kernel("vpicio"), "-n", "64K", "-r", "-o", tmp_path / "out"], config=cfg,
                     report=tmp_path / "report.json", timeout=120)
    assert not result.timed_out and result.returncode == 0
    assert "vpicio verify: ok" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "iotuner: warning" in line]
    assert len(warnings) == 1, result.stderr  # rank 0 only, once
    assert expected in warnings[0]
    assert "running with the application's own settings" in warnings[0]
    rep = result.report
    assert rep.settings["status"] == "rejected"
    assert expected in rep.settings["message"]
    assert rep.checks() == []  # nothing was applied
    assert h5diff(reference, tmp_path / "out" / "vpicio.h5").returncode == 0
    json.loads((tmp_path / "report.json").read_bytes().decode("utf-8"))  # valid UTF-8, valid JSON


def test_good_settings_give_no_warning(tmp_path):
    cfg = write_json(tmp_path / "ok.json", {"version": 1, "hdf5": {"alignment": [0, 4096]}})
    result = run_job(mpi() + [kernel("vpicio"), "-n", "16K", "-o", tmp_path], config=cfg)
    assert result.ok and "iotuner" not in result.stderr
    assert result.report.settings["status"] == "loaded"


def test_hints_the_mpi_library_refuses_are_dropped_and_the_file_opened(tmp_path, reference):
    """cb_config_list "nomatch" passes the validator (it is ROMIO's syntax), but ROMIO finds no aggregator
    to match and MPI_File_open fails: the open is retried with the application's own hints."""
    cfg = write_json(tmp_path / "s.json", {"version": 1, "mpiio": {"cb_config_list": "nomatch"}})
    result = run_job(mpi() + [kernel("vpicio"), "-n", "64K", "-r", "-o", tmp_path / "out"], config=cfg,
                     report=tmp_path / "report.json", timeout=120)
    assert result.returncode == 0, result.stderr
    assert "vpicio verify: ok" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "iotuner: warning" in line]
    assert len(warnings) == 1, result.stderr  # once, for the write and the read alike
    assert "failed with iotuner's hints" in warnings[0] and "No aggregators match" in warnings[0]
    rep = result.report
    assert rep.settings["status"] == "loaded"
    assert any("failed with iotuner's hints" in w for w in rep.warnings)
    checks = rep.checks(knob="cb_config_list")
    assert len(checks) == 2 and {c["status"] for c in checks} == {"failed"}  # the write and the read phase
    assert all("opened with the application's own" in c["reason"] for c in checks)
    assert [(p["bytes_written"], p["bytes_read"]) for p in rep.data_phases()] == [(2 * 64 * 1024 * 4 * 8, 0),
                                                                                  (0, 2 * 64 * 1024 * 4 * 8)]
    assert h5diff(reference, tmp_path / "out" / "vpicio.h5").returncode == 0
