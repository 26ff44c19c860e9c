"""A bad settings file never hurts the job: one warning from rank 0, exit
code 0, the same output as an untuned run."""

import subprocess

import pytest

from conftest import h5diff, kernel, mpi, run_job, write_json

pytestmark = pytest.mark.mpi

CASES = {
    "malformed": ('{"version": 1, "hdf5": {"alignment": [0, 4096],}}', "not valid JSON: line 1"),
    "unknown_knob": ('{"version": 1, "hdf5": {"alignmnet": [0, 4096]}}', "did you mean hdf5.alignment"),
    "wrong_type": ('{"version": 1, "mpiio": {"cb_nodes": "two"}}', 'cb_nodes: expected a whole number, got "two"'),
    "missing": (None, "cannot read settings file"),
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
    if text is not None:
        write_json(cfg, text)
    result = run_job(mpi() + [kernel("vpicio"), "-n", "64K", "-r", "-o", tmp_path / "out"], config=cfg)
    assert result.returncode == 0
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


def test_good_settings_give_no_warning(tmp_path):
    cfg = write_json(tmp_path / "ok.json", {"version": 1, "hdf5": {"alignment": [0, 4096]}})
    result = run_job(mpi() + [kernel("vpicio"), "-n", "16K", "-o", tmp_path], config=cfg)
    assert result.ok and "iotuner" not in result.stderr
    assert result.report.settings["status"] == "loaded"
