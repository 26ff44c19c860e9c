"""A crashing or hanging trial fails, with its reason, and the study goes on;
a tuner killed with SIGKILL resumes without losing or repeating a completed trial."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import one_knob_space
from iotuner.tune.store import Store

PROGRAMS = Path(__file__).parent / "programs"


def tune(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", *map(str, args)], capture_output=True, text=True, **kw
    )


def records(storage, name):
    """The study's records, through the store (the one reader of study state)."""
    return Store.open(storage, name, heartbeat_s=None).trials.records()


def test_crash_and_hang_are_recorded_and_the_study_completes(tmp_path):
    space = tmp_path / "space.json"
    space.write_text(
        json.dumps(
            {
                "name": "faults",
                "dimensions": [
                    {"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable", "disable"]},
                    {"knob": "mpiio.romio_ds_write", "values": ["automatic", "enable"]},
                ],
            }
        )
    )
    r = tune(
        "--space",
        space,
        "--strategy",
        "grid",
        "--trials",
        6,
        "--launcher",
        "none",
        "--timeout",
        "2s",
        "--objective",
        "regex:bandwidth=([0-9.]+)",
        "--confirm-top",
        1,
        "--confirm-rounds",
        3,
        "--study",
        "faults",
        "--out",
        tmp_path / "out",
        "--",
        sys.executable,
        PROGRAMS / "fake_app.py",
        timeout=120,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    by_mode = {}
    for t in records(f"sqlite:///{tmp_path / 'out' / 'study.db'}", "faults"):
        if t.kind == "trial":
            by_mode.setdefault(t.settings["mpiio.romio_cb_write"], []).append(t)
    assert {t.state for t in by_mode["disable"]} == {"FAIL"}
    assert all("killed by SIGSEGV" in t.error and "segmentation fault ahead" in t.error for t in by_mode["disable"])
    # the crash's NUL and control bytes are not stored: trials.csv stays text
    assert not any(c in t.error for t in by_mode["disable"] for c in "\0\x1b\x07")
    assert b"\0" not in (tmp_path / "out" / "trials.csv").read_bytes()
    assert {t.state for t in by_mode["enable"]} == {"FAIL"}
    assert all("timed out after 2 s" in t.error for t in by_mode["enable"])
    assert {t.state for t in by_mode["automatic"]} == {"COMPLETE"}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["winner"]["settings"]["mpiio.romio_ds_write"] == "enable"  # 200 beats 100
    assert summary["verdict"]["significant"] is True
    assert "failed" in r.stdout and "timed out" in r.stdout


def completed(storage, name):
    try:
        return [t for t in records(storage, name) if t.kind == "trial" and t.state == "COMPLETE"]
    except Exception:
        return []


# An MPI application stand-in (2 ranks under mpiexec): each rank leaves a start marker with its pid
# and parent. While the file HANG_FROM holds a number, the runs of trials from that number on hang,
# so a kill lands inside a running trial.
MARKED_APP = """
import json, os, sys, time
marks, label = os.environ["MARKS"], os.path.basename(os.getcwd())
knobs = {}
for group in json.load(open(os.environ["IOTUNER_CONFIG"])).get("groups", []):
    knobs.update(group.get("mpiio", {}))
with open(os.path.join(marks, f"{label}.{os.environ.get('PMI_RANK', '0')}.start"), "w") as f:
    json.dump({"pid": os.getpid(), "ppid": os.getppid()}, f)
try:
    hang_from = int(open(os.path.join(marks, "HANG_FROM")).read())
except OSError:
    hang_from = None
time.sleep(300 if hang_from is not None and label.startswith("t") and int(label[1:5]) >= hang_from else 0.05)
score = {"enable": 100, "disable": 300}.get(knobs.get("romio_cb_write"), 200)
score += {"enable": 5, "disable": 10}.get(knobs.get("romio_ds_write"), 0)
score += {"enable": 1, "disable": 2}.get(knobs.get("romio_cb_read"), 0)
print(f"bandwidth={score}")
"""


def _parent_of(pid):
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _running(pid):
    """Alive and not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.mpi
@pytest.mark.slow
def test_sigkill_during_a_trial_then_resume_loses_and_repeats_nothing(tmp_path):
    marks, scratch, out, log = (tmp_path / d for d in ("marks", "scratch", "out", "runs.jsonl"))
    marks.mkdir()
    scratch.mkdir()
    app = tmp_path / "app.py"
    app.write_text(MARKED_APP)
    space = tmp_path / "space.json"
    space.write_text(
        json.dumps(
            {
                "name": "hints",
                "dimensions": [
                    {"knob": f"mpiio.{k}", "values": ["automatic", "enable", "disable"]}
                    for k in ("romio_cb_write", "romio_ds_write", "romio_cb_read")
                ],
            }
        )
    )
    storage = f"sqlite:///{out / 'study.db'}"
    args = [
        "--space",
        space,
        "--strategy",
        "random",
        "--trials",
        12,
        "--repeats",
        2,
        "--confirm-top",
        1,
        "--objective",
        "regex:bandwidth=([0-9.]+)",
        "--study",
        "k",
        "--out",
        out,
        "--scratch",
        scratch,
        "--eval-log",
        log,
        "--",
        sys.executable,
        app,
    ]
    env = {**os.environ, "MARKS": str(marks)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "iotuner", "tune", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    (marks / "HANG_FROM").write_text("5")
    pids = []
    try:
        deadline = time.time() + 180
        label = None
        while label is None and time.time() < deadline and proc.poll() is None:
            starts = [m.rsplit(".", 2)[0] for m in os.listdir(marks) if m.startswith("t") and m.endswith(".start")]
            label = next((lbl for lbl in starts if int(lbl[1:5]) >= 5 and starts.count(lbl) == 2), None)
            time.sleep(0.05)
        assert label, "no trial run started"
        for rank in (0, 1):
            mark = json.loads((marks / f"{label}.{rank}.start").read_text())
            pids += [mark["pid"], mark["ppid"]]  # the rank and its hydra proxy
        pids.append(_parent_of(pids[1]))  # mpiexec
        assert all(p and _running(p) for p in pids), pids  # the trial's application is running
        index = {t.number: i for i, t in enumerate(t for t in records(storage, "k") if t.kind == "trial")}
        before = {index[t.number]: (t.runs, t.settings) for t in completed(storage, "k")}
        interrupted = int(label[1:5])  # the trial's index, as in its run labels
        assert interrupted not in before

        proc.send_signal(signal.SIGKILL)  # inside the trial
        proc.wait()
        gone_by = time.time() + 8
        while any(_running(p) for p in pids) and time.time() < gone_by:
            time.sleep(0.1)
        assert not [p for p in pids if _running(p)], "the application outlived the killed tuner"
        assert list(scratch.glob(f"w-*/{label}"))  # left by the interrupted run, in its worker's directory
        assert len(before) >= 2
    finally:
        for p in pids:  # never leave a hung rank behind, whatever failed above
            if p and _running(p):
                os.kill(p, signal.SIGKILL)
        (marks / "HANG_FROM").unlink(missing_ok=True)
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    lines_before = len(log.read_text().splitlines())
    r = tune("--resume", "--study", "k", "--storage", storage, "--eval-log", log, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert "resuming study k" in r.stdout
    assert not list(scratch.glob(f"*/{label}"))  # the interrupted run's scratch is removed on resume
    assert not [d for d in scratch.iterdir()]  # and no other run's, nor the workers' directories

    trials = [t for t in records(storage, "k") if t.kind == "trial"]
    after = {i: t for i, t in enumerate(trials) if t.state == "COMPLETE"}
    for i, (runs, settings) in before.items():  # nothing completed was lost or changed
        assert after[i].runs == runs and after[i].settings == settings
    ran = [t for t in trials if t.cost_runs > 0 and not t.interrupted]
    assert len(ran) == 12  # the budget, counted once
    # no configuration completed before the kill ran again, under any number
    done_before = {json.dumps(s, sort_keys=True) for _, s in before.values()}
    resumed_labels = [json.loads(line)["label"] for line in log.read_text().splitlines()[lines_before:]]
    resumed_trials = {int(lbl[1:5]) for lbl in resumed_labels if lbl.startswith("t")}
    assert resumed_trials and all(n > max(before) for n in resumed_trials)
    rerun = [n for n in resumed_trials if json.dumps(trials[n].settings, sort_keys=True) in done_before]
    assert rerun == [], f"trials {rerun} ran configurations completed before the kill"
    # the trial cut short is run again once, under a new number
    cut = trials[interrupted]
    assert cut.interrupted and cut.state == "FAIL"
    assert sum(1 for t in ran if t.attrs.get("retry_of") == cut.number) == 1
    assert json.loads((out / "summary.json").read_text())["trials_run"] == 12


def test_a_default_that_fails_after_its_first_run_is_not_retried_forever(tmp_path):
    app = tmp_path / "once.py"
    app.write_text(
        "import pathlib, sys\n"
        f"flag = pathlib.Path({str(tmp_path / 'ran')!r})\n"
        "if flag.exists():\n"
        "    sys.exit('fails from the second run on')\n"
        "flag.touch()\n"
        "print('bandwidth=100')\n"
    )
    space = one_knob_space(tmp_path / "space.json", "s", "mpiio.romio_cb_write", ["enable", "disable"])
    log = tmp_path / "runs.jsonl"
    r = tune(
        "--space",
        space,
        "--launcher",
        "none",
        "--repeats",
        3,
        "--trials",
        2,
        "--objective",
        "regex:bandwidth=([0-9.]+)",
        "--study",
        "once",
        "--out",
        tmp_path / "out",
        "--eval-log",
        log,
        "--",
        sys.executable,
        app,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    baseline = [
        json.loads(line) for line in log.read_text().splitlines() if json.loads(line)["label"].startswith("baseline")
    ]
    assert [b["ok"] for b in baseline][:1] == [True] and len(baseline) <= 2 * 3
    assert "only 1 of 3 runs of the default settings succeeded" in " ".join(r.stdout.split())
