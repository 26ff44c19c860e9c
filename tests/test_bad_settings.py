"""A bad settings file never hurts the job: one warning from rank 0, exit
code 0, the same output as an untuned run, and a report that says why."""

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import h5diff, kernel, mpi, run_job, write_json
from iotuner import run_report

pytestmark = pytest.mark.mpi

FIFO = object()  # the settings "file" is a FIFO nobody writes to: reading it would block every rank

CASES = {
    "malformed": ('{"version": 1, "hdf5": {"alignment": [0, 4096],}}', "not valid JSON: line 1"),
    "unknown_knob": ('{"version": 1, "hdf5": {"alignmnet": [0, 4096]}}', "did you mean hdf5.alignment"),
    "wrong_type": ('{"version": 1, "mpiio": {"cb_nodes": "two"}}', 'cb_nodes: expected a whole number, got "two"'),
    "missing": (None, "cannot read settings file"),
    # the first value of a repeated key would be lost without a word
    "repeated_key": (
        '{"version": 1, "hdf5": {"alignmnet": [0, 4096]},\n "hdf5": {"alignment": [0, 4096]}}',
        "line 2, column 2: key 'hdf5' appears twice",
    ),
    # written raw into the report, bytes that are not UTF-8 made every reader of it fail
    "invalid_utf8": (b'{"version": 1, "mpiio": {"cb_config_list": "*:2\xff"}}', "invalid UTF-8 in string"),
    "fifo": (FIFO, "is not a regular file (a FIFO)"),
    # several errors: the one warning line names the first and where to see them all
    "several_errors": (
        '{"version": 1, "mpiio": {"cb_nodes": "two", "romio_cb_write": "on"}}',
        "cb_nodes: expected a whole number, got \"two\" (and more: 'iotuner check' lists every error)",
    ),
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
    result = run_job(
        mpi() + [kernel("vpicio"), "-n", "64K", "-r", "-o", tmp_path / "out"],
        config=cfg,
        report=tmp_path / "report.json",
        timeout=120,
    )
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
    result = run_job(
        mpi() + [kernel("vpicio"), "-n", "64K", "-r", "-o", tmp_path / "out"],
        config=cfg,
        report=tmp_path / "report.json",
        timeout=120,
    )
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
    assert [(p["bytes_written"], p["bytes_read"]) for p in rep.data_phases()] == [
        (2 * 64 * 1024 * 4 * 8, 0),
        (0, 2 * 64 * 1024 * 4 * 8),
    ]
    assert h5diff(reference, tmp_path / "out" / "vpicio.h5").returncode == 0


# Documents that `iotuner check` used to accept and that killed or stalled the job (issue 26): the validator now
# knows the libraries' limits, and the runtime refuses legal but ruinous chunking at H5Dcreate.
# (document, where it shows: "rejected" or a check's status, text of the one warning)
HARMFUL = {
    "cb_buffer_size_4G": (
        {"version": 1, "mpiio": {"cb_buffer_size": "4G", "romio_cb_write": "enable"}},
        "rejected",
        "4G is above the maximum 2147483647 (ROMIO keeps it in a C int)",
    ),
    "cb_buffer_size_2G": (
        {"version": 1, "mpiio": {"cb_buffer_size": "2G", "romio_cb_write": "enable"}},
        "rejected",
        "2G is above the maximum 2147483647",
    ),
    "alignment_1T": ({"version": 1, "hdf5": {"alignment": [1, "1T"]}}, "rejected", "1T is above the maximum 4G"),
    "chunk_bytes_1": ({"version": 1, "hdf5": {"chunk_bytes": 1}}, "failed", "131072 chunks of 4 bytes"),
    "chunk_dims_1": ({"version": 1, "hdf5": {"chunk_dims": [1]}}, "failed", "131072 chunks of 4 bytes"),
    "dataset_glob_unmatched": (
        {"version": 1, "groups": [{"dataset": "no_such_dataset*", "hdf5": {"transfer_mode": "collective"}}]},
        "unmatched",
        "'no_such_dataset*' matched no dataset",
    ),
}


def _vpicio(tmp_path, name, config=None):
    """`iotuner run` (the CLI) of vpicio on 2 ranks: (completed process, seconds, output file, report)."""
    out = tmp_path / name
    out.mkdir()
    report = tmp_path / f"{name}.json"
    argv = [sys.executable, "-m", "iotuner", "run", "--report", str(report)]
    argv += ["--config", str(config)] if config else []
    t0 = time.monotonic()
    r = subprocess.run(
        [*argv, "--", *mpi(), kernel("vpicio"), "-n", "64K", "-r", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return r, time.monotonic() - t0, out / "vpicio.h5", report


@pytest.mark.parametrize("case", sorted(HARMFUL))
def test_harmful_document_runs_as_untuned(tmp_path, case):
    """Exit 0, one warning, the untuned output, in about the untuned time: the tuned run is timed against an
    untuned one right before it (a stall took minutes where the untuned run takes a fraction of a second)."""
    doc, where, expected = HARMFUL[case]
    cfg = write_json(tmp_path / "settings.json", doc)
    plain, plain_s, plain_h5, _ = _vpicio(tmp_path, "plain")
    assert plain.returncode == 0, plain.stderr
    r, tuned_s, tuned_h5, rep_path = _vpicio(tmp_path, "tuned", cfg)
    assert r.returncode == 0, r.stderr
    assert "vpicio verify: ok" in r.stdout and "Traceback" not in r.stderr
    warnings = [line for line in (r.stdout + r.stderr).splitlines() if "warning" in line]
    assert len(warnings) == 1, r.stdout + r.stderr  # the CLI or the runtime, once; the tables do not repeat it
    assert expected in warnings[0]
    assert h5diff(plain_h5, tuned_h5).returncode == 0
    assert tuned_s < 5 * plain_s + 5, (tuned_s, plain_s)
    rep = run_report.load(rep_path)
    if where == "rejected":
        assert rep.settings["status"] == "rejected" and rep.checks() == []
    elif where == "unmatched":
        assert rep.settings["status"] == "loaded" and rep.checks() == []
        assert any(expected in w for w in rep.warnings)
    else:
        checks = [c for c in rep.checks(knob=next(iter(doc["hdf5"]))) if c.get("dataset")]
        assert len(checks) == 8 and {c["status"] for c in checks} == {where}  # vpicio's 8 datasets
        assert all(c["reason"].startswith("refused by iotuner") for c in checks)


def test_chunks_under_4k_stay_applied_on_small_datasets(tmp_path):
    """The guard is about numbers: 2 KiB chunks of a dataset that has 256 of them are applied as asked."""
    cfg = write_json(tmp_path / "s.json", {"version": 1, "hdf5": {"chunk_bytes": "2K"}})
    result = run_job(mpi() + [kernel("vpicio"), "-n", "256", "-o", tmp_path], config=cfg, report=tmp_path / "r.json")
    assert result.ok and "warning" not in result.stderr, result.stderr
    checks = result.report.checks(knob="chunk_bytes")
    assert len(checks) == 8 and {c["status"] for c in checks} == {"applied"}


def test_a_dataset_glob_that_matches_is_not_reported(tmp_path):
    cfg = write_json(
        tmp_path / "s.json",
        {
            "version": 1,
            "groups": [
                {"dataset": "x", "hdf5": {"chunk_bytes": "4K"}},
                {"dataset": "nothing_*", "hdf5": {"chunk_bytes": "8K"}},
            ],
        },
    )
    result = run_job(mpi() + [kernel("vpicio"), "-n", "4K", "-o", tmp_path], config=cfg, report=tmp_path / "r.json")
    assert result.ok, result.stderr
    warnings = [w for w in result.report.warnings if "matched no dataset" in w]
    assert warnings == ["the dataset pattern 'nothing_*' matched no dataset: its settings were applied nowhere"]
    assert [c["dataset"] for c in result.report.checks(knob="chunk_bytes")] == ["/Step#0/x"]
