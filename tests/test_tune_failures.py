"""A crashing or hanging trial fails, with its reason, and the study goes on;
a tuner killed with SIGKILL resumes without losing or repeating a completed trial."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

PROGRAMS = Path(__file__).parent / "programs"


def tune(*args, **kw):
    return subprocess.run([sys.executable, "-m", "iotuner", "tune", *map(str, args)], capture_output=True, text=True,
                          **kw)


def test_crash_and_hang_are_recorded_and_the_study_completes(tmp_path):
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"name": "faults", "dimensions": [
        {"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable", "disable"]},
        {"knob": "mpiio.romio_ds_write", "values": ["automatic", "enable"]}]}))
    r = tune("--space", space, "--strategy", "grid", "--trials", 6, "--launcher", "none", "--timeout", "2s",
             "--objective", "regex:bandwidth=([0-9.]+)", "--confirm-top", 1, "--confirm-rounds", 3,
             "--study", "faults", "--out", tmp_path / "out", "--", sys.executable, PROGRAMS / "fake_app.py",
             timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    store = optuna.load_study(study_name="faults", storage=f"sqlite:///{tmp_path / 'out' / 'study.db'}")
    by_mode = {}
    for t in store.trials:
        by_mode.setdefault(t.user_attrs["settings"]["mpiio.romio_cb_write"], []).append(t)
    assert {t.state for t in by_mode["disable"]} == {TrialState.FAIL}
    assert all("killed by SIGSEGV" in t.user_attrs["error"] and "segmentation fault ahead" in t.user_attrs["error"]
               for t in by_mode["disable"])
    assert {t.state for t in by_mode["enable"]} == {TrialState.FAIL}
    assert all("timed out after 2 s" in t.user_attrs["error"] for t in by_mode["enable"])
    assert {t.state for t in by_mode["automatic"]} == {TrialState.COMPLETE}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["winner"]["settings"]["mpiio.romio_ds_write"] == "enable"  # 200 beats 100
    assert summary["verdict"]["significant"] is True
    assert "failed" in r.stdout and "timed out" in r.stdout


def completed(storage, name):
    try:
        study = optuna.load_study(study_name=name, storage=storage)
    except Exception:
        return []
    return [t for t in study.trials if t.state == TrialState.COMPLETE]


def test_sigkill_then_resume_loses_and_repeats_nothing(tmp_path):
    out, log = tmp_path / "out", tmp_path / "runs.jsonl"
    storage = f"sqlite:///{out / 'study.db'}"
    args = ["--synthetic", "ufs", "--synthetic-delay", "0.3", "--trials", 12, "--repeats", 2, "--strategy", "bayes",
            "--confirm-rounds", 2, "--study", "k", "--out", out, "--eval-log", log]
    proc = subprocess.Popen([sys.executable, "-m", "iotuner", "tune", *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while len(completed(storage, "k")) < 4 and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(0.35)  # most likely inside a trial now
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = {t.number: (t.value, t.user_attrs["settings"]) for t in completed(storage, "k")}
    assert 4 <= len(before) < 12

    r = tune("--resume", "--study", "k", "--storage", storage, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "resuming study k" in r.stdout
    study = optuna.load_study(study_name="k", storage=storage)
    after = {t.number: t for t in study.trials if t.state == TrialState.COMPLETE}
    for number, (value, settings) in before.items():  # nothing completed was lost or changed
        assert after[number].value == value and after[number].user_attrs["settings"] == settings
    ran = [t for t in study.trials if t.user_attrs.get("cost_runs", 0) > 0 and not t.user_attrs.get("interrupted")]
    assert len(ran) == 12  # the budget, counted once
    labels = [json.loads(line)["label"] for line in log.read_text().splitlines()]
    for number in after:  # no completed trial was run again
        assert labels.count(f"t{number:04d}-r1") <= 1
    interrupted = [t for t in study.trials if t.user_attrs.get("interrupted")]
    for t in interrupted:  # a trial cut short is run again, under a new number
        assert any(u.user_attrs.get("settings") == t.user_attrs["settings"] and u.number > t.number for u in ran)
    assert json.loads((out / "summary.json").read_text())["trials_run"] == 12
