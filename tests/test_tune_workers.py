"""Two tuner processes on one study at once (SQLite in WAL mode), one of them killed."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from iotuner.tune.store import Store

pytestmark = pytest.mark.slow

# Each run leaves a start marker (its label and the tuner that runs it) and takes 0.2 s; while the file HOLD
# exists, a run waits, so the test can kill a worker inside a run it knows; bandwidth follows the settings.
APP = """
import json, os, sys, time
marks, label = os.environ["MARKS"], os.path.basename(os.getcwd())
knobs = {}
for group in json.load(open(os.environ["IOTUNER_CONFIG"])).get("groups", []):
    knobs.update(group.get("mpiio", {}))
with open(os.path.join(marks, f"{os.getppid()}.{label}.{time.time()}"), "w") as f:
    f.write(label)
time.sleep(0.2)
while os.path.exists(os.environ["HOLD"]):
    time.sleep(0.02)
score = {"enable": 100, "disable": 300}.get(knobs.get("romio_cb_write"), 200)
score += {"enable": 5, "disable": 10}.get(knobs.get("romio_ds_write"), 0)
score += {"enable": 1, "disable": 2}.get(knobs.get("romio_cb_read"), 0)
score += {"1048576": 0.1, "4194304": 0.2}.get(str(knobs.get("cb_buffer_size")), 0)
print(f"bandwidth={score}", flush=True)
os._exit(0)  # no run report: it would say, truly, that no MPI-IO hint reached a file, and every point is the default
"""


def tuner(args, env):
    return subprocess.Popen(
        [sys.executable, "-m", "iotuner", "tune", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_two_workers_share_a_study_and_one_is_killed(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    app = tmp_path / "app.py"
    app.write_text(APP)
    space = tmp_path / "space.json"
    space.write_text(
        json.dumps(
            {
                "name": "hints",
                "dimensions": [
                    *(
                        {"knob": f"mpiio.{k}", "values": ["automatic", "enable", "disable"]}
                        for k in ("romio_cb_write", "romio_ds_write", "romio_cb_read")
                    ),
                    {"knob": "mpiio.cb_buffer_size", "values": [1 << 20, 4 << 20, 16 << 20]},
                ],
            }
        )
    )
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    hold = tmp_path / "hold"
    env = {**os.environ, "MARKS": str(marks), "HOLD": str(hold)}
    common = ["--storage", storage, "--study", "w", "--heartbeat", 1]
    first = tuner(
        [
            "--space",
            space,
            "--strategy",
            "random",
            "--trials",
            30,
            "--launcher",
            "none",
            "--objective",
            "regex:bandwidth=([0-9.]+)",
            "--confirm-top",
            1,
            "--baseline-every",
            0,
            "--out",
            tmp_path / "out",
            *common,
            "--",
            sys.executable,
            app,
        ],
        env,
    )
    second = None
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not any(m.name.split(".")[1].startswith("t") for m in marks.iterdir()):
            time.sleep(0.05)  # the first worker has created the study and started searching
        second = tuner(["--resume", *common], env)

        def runs_of(proc):
            return [m.name.split(".")[1] for m in marks.iterdir() if m.name.startswith(f"{proc.pid}.")]

        while time.time() < deadline and not (
            len([r for r in runs_of(first) if r.startswith("t")]) >= 3
            and len([r for r in runs_of(second) if r.startswith("t")]) >= 2
        ):
            time.sleep(0.05)
        hold.touch()  # from here no run ends: the trials seen running below are still running at the kill
        store = Store.open(storage, "w", heartbeat_s=None)
        running = {}
        while time.time() < deadline and not (first.pid in running and second.pid in running):
            store.refresh()  # until each worker is inside a trial
            before = {r.id: r for r in store.trials.records()}
            running = {
                r.attrs["owner"]["pid"]: r
                for r in before.values()
                if r.kind == "trial" and r.state == "RUNNING" and "settings" in r.attrs
            }
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        hold.unlink()
        assert first.pid in running and second.pid in running, (running, second.pid)
        killed, survivors = running[first.pid], running[second.pid]
        out, err = second.communicate(timeout=300)
        assert second.returncode == 0, err + out[-2000:]
    finally:
        hold.unlink(missing_ok=True)
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()

    store = Store.open(storage, "w", heartbeat_s=None)
    after = {r.id: r for r in store.trials.records()}
    # no completed run lost or changed
    for rid, r in before.items():
        if r.state == "COMPLETE":
            assert after[rid].state == "COMPLETE" and after[rid].runs == r.runs
    # the survivor's running trial was left to it: finished by its own worker, not failed or run again
    mine = after[survivors.id]
    assert mine.state == "COMPLETE" and mine.session == survivors.session and not mine.interrupted
    assert not any(r.attrs.get("retry_of") == survivors.number for r in after.values())
    # the killed worker's trial failed as interrupted and ran again once, under a new number
    cut = after[killed.id]
    assert cut.interrupted and cut.state == "FAIL"
    retries = [r for r in after.values() if r.attrs.get("retry_of") == killed.number]
    assert len(retries) == 1 and retries[0].state == "COMPLETE" and retries[0].settings == killed.settings
    # nothing repeated: no configuration measured twice by search trials that cost runs
    ran = [r for r in store.trials.search_trials() if r.cost_runs > 0 and r.state == "COMPLETE"]
    keys = [json.dumps(r.settings, sort_keys=True) for r in ran]
    assert len(keys) == len(set(keys))
    assert store.trials.trials_run() >= 30
    # both workers' runs are in one study, on one clock
    assert len({r.session for r in ran}) == 2
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["verdict"] and summary["verdict"]["significant"] is True, (summary, out[-3000:])
    assert summary["winner"]["settings"]["mpiio.romio_cb_write"] == "disable"


def test_a_worker_that_dies_in_the_confirmation_round_leaves_it_to_one_other(tmp_path):
    """Two workers; the one running the confirmation round is killed: the other runs the round again, once,
    says so, and the study ends with one complete round (the cut one superseded) and one verdict."""
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    common = ["--storage", storage, "--study", "c", "--heartbeat", 1]
    first = tuner(
        [
            "--synthetic",
            "ufs",
            "--synthetic-delay",
            0.25,
            "--trials",
            8,
            "--confirm-top",
            2,
            "--confirm-rounds",
            4,
            "--baseline-every",
            0,
            "--out",
            tmp_path / "out",
            *common,
        ],
        os.environ,
    )
    second = None
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not (tmp_path / "study.db").exists():
            time.sleep(0.05)
        time.sleep(1.0)
        second = tuner(["--resume", *common], os.environ)
        store = Store.open(storage, "c", heartbeat_s=None)
        lease = None
        while time.time() < deadline:
            store.refresh()
            lease = store.workers.lease("confirmation-0")
            if (
                lease is not None
                and lease.state == "held"
                and sum(1 for r in store.trials.records("confirmation") if r.attrs.get("plan") == "confirmation-0/1")
                >= 2
            ):
                break
            time.sleep(0.05)
        assert lease is not None and lease.pid in (first.pid, second.pid)
        holder, other = (first, second) if lease.pid == first.pid else (second, first)
        os.kill(holder.pid, signal.SIGKILL)  # in the middle of the round
        holder.wait()
        out, err = other.communicate(timeout=300)
        assert other.returncode == 0, err + out[-3000:]
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    assert "runs the round again, from the start (start 2)" in out
    store = Store.open(storage, "c", heartbeat_s=None)
    lease = store.workers.lease("confirmation-0")
    assert lease.attempt == 2 and lease.state == "done" and lease.pid == other.pid
    plans = {r.attrs["plan"] for r in store.trials.records("confirmation")}
    assert plans == {"confirmation-0/1", "confirmation-0/2"}
    rows = list(csv.DictReader(open(tmp_path / "out" / "trials.csv")))
    current = [r for r in rows if r["kind"] == "confirmation"]
    assert len(current) == len({r["round"] for r in current}) * 3  # each round: the default and 2 candidates
    assert any(r["kind"] == "confirmation-superseded" for r in rows)
    assert out.count("best: ") == 1
