"""Distributed tuning with the real parts: a single-node Slurm cluster and a PostgreSQL server, both started
by the project's own scripts (scripts/slurm.sh, scripts/postgres.sh)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from iotuner.tune import config as cfg
from iotuner.tune.launch import local, slurm
from iotuner.tune.store import Store

from conftest import kernel

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
ONE_AGGREGATOR = {"version": 1, "mpiio": {"romio_cb_write": "enable"}}


def script(name, *args, env=None):
    r = subprocess.run([str(ROOT / "scripts" / name), *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=180)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def postgres_missing():
    import glob
    return not glob.glob("/usr/lib/postgresql/*/bin/postgres")


@pytest.fixture
def postgres():
    if postgres_missing():
        pytest.skip("PostgreSQL is not installed (scripts/setup.sh installs it)")
    d = Path(tempfile.mkdtemp(prefix="iotuner-pg-"))  # under /tmp: the postgres user must reach it
    url = script("postgres.sh", "start", d)
    yield url, d
    script("postgres.sh", "stop", d)


@pytest.fixture(scope="module")
def cluster():
    if os.geteuid() != 0 or not shutil.which("slurmctld"):
        pytest.skip("needs root and Slurm (scripts/setup.sh installs slurm-wlm and munge)")
    d = Path(tempfile.mkdtemp(prefix="iotuner-slurm-"))
    conf = script("slurm.sh", "start", d, 4)
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = conf
    yield conf
    script("slurm.sh", "stop", d)
    if old is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = old


def tune(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "iotuner", "tune", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def squeue(name):
    r = subprocess.run(["squeue", "-h", "-n", name, "-o", "%i %T"], capture_output=True, text=True)
    return [line.split() for line in r.stdout.splitlines() if line.strip()]


def wait_for(predicate, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


# ---- no shell from content ----

HOSTILE = ["two words", "it's", 'say "hi"', "a;b", "$(touch /tmp/iotuner-pwned)", "`id`", "line\nbreak", "*",
           "--", "$HOME", "back\\slash"]
ECHO_APP = ("import json, os, sys\n"
            "json.dump({'argv': sys.argv[1:], 'cwd': os.getcwd()}, open(os.path.join(os.getcwd(), 'seen.json'), 'w'))\n"
            "print('bandwidth=1')\n")


def check_hostile(launcher, tmp_path):
    pwned = Path("/tmp/iotuner-pwned")
    pwned.unlink(missing_ok=True)
    app = tmp_path / "echo app.py"
    app.write_text(ECHO_APP)
    cwd = tmp_path / "run; $(id) 'q' \"d\"\nnl"
    cwd.mkdir()
    result = launcher.run([sys.executable, str(app), *HOSTILE], config=None, report=cwd / "report.json", cwd=cwd,
                          timeout=120)
    assert result.returncode == 0, (result.stdout, result.stderr)
    seen = json.loads((cwd / "seen.json").read_text())
    assert seen["argv"] == HOSTILE and seen["cwd"] == str(cwd)
    assert not pwned.exists()


def test_hostile_arguments_and_paths_reach_the_application_unchanged(tmp_path):
    check_hostile(local.Direct(), tmp_path)


def test_hostile_arguments_and_paths_through_a_slurm_job(tmp_path, cluster):
    check_hostile(slurm.Slurm(1, cfg.SlurmSpec(time_limit="5"), "iotuner-hostile"), tmp_path)


def test_hostile_study_names_and_storage_urls_in_a_worker_script(tmp_path):
    from iotuner.tune import workers
    study, storage = "a b;$(touch /tmp/iotuner-pwned)'\"\nx", "sqlite:////tmp/it's; $(id)/study.db"
    text = workers.worker_script(study, storage, 7)
    probe = tmp_path / "probe.sh"  # the same script with a program that prints its arguments
    probe.write_text(text.replace(sys.executable, f"{sys.executable} -c 'import json,sys; "
                                                   f"print(json.dumps(sys.argv[1:]))'", 1))
    r = subprocess.run(["sh", str(probe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    argv = json.loads(r.stdout)
    assert argv[argv.index("--study") + 1] == study and argv[argv.index("--storage") + 1] == storage
    assert not Path("/tmp/iotuner-pwned").exists()


# ---- PostgreSQL ----

def test_a_study_on_postgresql_survives_a_lost_connection(tmp_path, postgres):
    url, d = postgres
    args = ["--synthetic", "ufs", "--synthetic-delay", 0.2, "--trials", 20, "--study", "pg", "--storage", url,
            "--out", tmp_path / "out", "--heartbeat", 1]
    proc = tune(*args)
    store = Store.open(url, "pg", heartbeat_s=None) if wait_for(
        lambda: _has_study(url, "pg"), 60, "the study") else None

    def done():
        store.refresh()
        return store.trials_run() >= 5
    wait_for(done, 120, "5 trials")
    before = {r.number: r.runs for r in store.records() if r.state == "COMPLETE"}
    script("postgres.sh", "halt", d)  # the server goes away mid-study
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "Traceback" not in err, err
    assert "the study storage failed" in err and "--resume" in err
    script("postgres.sh", "start", d)
    r = subprocess.run([sys.executable, "-m", "iotuner", "tune", "--resume", "--study", "pg", "--storage", url,
                        "--heartbeat", "1"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    store = Store.open(url, "pg", heartbeat_s=None)
    after = {r.number: r.runs for r in store.records() if r.state == "COMPLETE"}
    assert all(after[n] == runs for n, runs in before.items())  # nothing completed was lost
    assert store.trials_run() == 20
    keys = [r.key for r in store.search_trials() if r.cost_runs and r.state == "COMPLETE"]
    assert len(keys) == len(set(keys))  # nothing measured twice


def _has_study(url, name):
    try:
        Store.open(url, name, heartbeat_s=None)
        return True
    except Exception:
        return False


# ---- Slurm ----

# a trial's run (its directory t0000-r0, ...) lasts long enough to be caught running; the default's and the
# confirmation's runs need not wait
SLOW_APP = ("import os, time\n"
            "time.sleep(2 if os.path.basename(os.getcwd()).startswith('t') else 0)\n"
            "print('bandwidth=100')\n")


def test_a_trial_whose_job_slurm_cancels_runs_again_once(tmp_path, cluster):
    app = tmp_path / "app.py"
    app.write_text(SLOW_APP)
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"name": "s", "dimensions": [
        {"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable", "disable"]}]}))
    study = "cancelled"
    proc = tune("--space", space, "--strategy", "grid", "--trials", 2, "--launcher", "slurm", "--ranks", 1,
                "--objective", "regex:bandwidth=([0-9.]+)", "--baseline-every", 0, "--confirm-top", 1,
                "--study", study, "--out", tmp_path / "out", "--", sys.executable, app)
    # the first trial's job: cancel it while it runs (baseline first, then trials t0000...)
    storage = f"sqlite:///{tmp_path / 'out' / 'study.db'}"
    wait_for(lambda: _has_study(storage, study), 60, "the study")
    store = Store.open(storage, study, heartbeat_s=None)

    def trial_job():
        store.refresh()
        if not any(r.state == "RUNNING" for r in store.search_trials()):
            return None
        running = [j for j, state in squeue(f"iotuner-{study}") if state == "RUNNING"]
        return running[0] if running else None
    job = wait_for(trial_job, 90, "a trial's job")
    subprocess.run(["scancel", job], check=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err + out[-2000:]
    store.refresh()
    cancelled = [r for r in store.search_trials() if r.error and "CANCELLED" in r.error]
    assert len(cancelled) == 1 and cancelled[0].state == "FAIL"
    assert "the scheduler ended the job" in cancelled[0].error
    retries = [r for r in store.search_trials() if r.attrs.get("retry_of") == cancelled[0].number]
    assert len(retries) == 1 and retries[0].state == "COMPLETE" and retries[0].settings == cancelled[0].settings
    assert store.trials_run() == 2  # the cancelled run did not count against the budget: its retry did


def test_a_killed_tuner_leaves_no_job_and_resumes(tmp_path, cluster):
    app = tmp_path / "app.py"
    app.write_text(SLOW_APP)
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"name": "s", "dimensions": [
        {"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable", "disable"]},
        {"knob": "mpiio.romio_ds_write", "values": ["automatic", "enable", "disable"]}]}))
    study = "killed"
    args = ["--study", study, "--storage", f"sqlite:///{tmp_path / 'study.db'}"]
    proc = tune("--space", space, "--strategy", "random", "--trials", 4, "--launcher", "slurm", "--ranks", 1,
                "--objective", "regex:bandwidth=([0-9.]+)", "--confirm-top", 1, "--confirm-rounds", 2,
                "--out", tmp_path / "out", *args, "--", sys.executable, app)
    try:
        wait_for(lambda: _has_study(args[3], study), 60, "the study")
        store = Store.open(args[3], study, heartbeat_s=None)

        def trial_running():  # a trial's job, not the default's
            store.refresh()
            return any(r.state == "RUNNING" for r in store.search_trials()) and \
                [j for j, s in squeue(f"iotuner-{study}") if s == "RUNNING"]
        wait_for(trial_running, 90, "a trial's running job")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        wait_for(lambda: not squeue(f"iotuner-{study}") or None, 15, "the study's jobs to be gone")
    finally:
        if proc.poll() is None:
            proc.kill()
    r = subprocess.run([sys.executable, "-m", "iotuner", "tune", "--resume", *args], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    store = Store.open(args[3], study, heartbeat_s=None)
    assert store.trials_run() == 4
    assert any(rec.interrupted for rec in store.search_trials())


def test_two_workers_on_slurm_and_postgresql_tune_a_kernel_and_survive_a_cancelled_worker(tmp_path, cluster,
                                                                                           postgres):
    url, _ = postgres
    baseline = tmp_path / "one-aggregator.json"
    baseline.write_text(json.dumps(ONE_AGGREGATOR))
    study = "twoworkers"
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        proc = tune("--baseline", baseline, "--space", "romio", "--strategy", "random", "--trials", 10,
                    "--objective", "write-bw", "--launcher", "slurm", "--workers", 2, "--submit", "--heartbeat", 2,
                    "--baseline-every", 0, "--study", study, "--storage", url, "--out", tmp_path / "out",
                    "--scratch", scratch, "--", kernel("h5ior"), "-b", "16M", "-t", "1M", "-o", "{scratch}")
        try:
            wait_for(lambda: _has_study(url, study), 60, "the study")
            store = Store.open(url, study, heartbeat_s=None)

            def busy_workers():
                store.refresh()
                jobs = {r.attrs["owner"].get("slurm_job") for r in store.search_trials() if r.state == "RUNNING"
                        and "settings" in r.attrs and store.trials_run() >= 2}
                return sorted(j for j in jobs if j) if len(jobs) == 2 else None
            jobs = wait_for(busy_workers, 240, "two workers inside trials")
            before = {r.number: r.runs for r in store.records() if r.state == "COMPLETE"}
            running = {r.attrs["owner"]["slurm_job"]: r for r in store.search_trials() if r.state == "RUNNING"}
            victim = jobs[0]
            subprocess.run(["scancel", victim], check=True)  # one worker's job, mid-trial
            out, err = proc.communicate(timeout=900)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, err + out[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["verdict"]["significant"] is True and summary["verdict"]["gain"] >= 2.0, summary["verdict"]
    store = Store.open(url, study, heartbeat_s=None)
    after = {r.number: r for r in store.records()}
    assert all(after[n].runs == runs for n, runs in before.items())  # no completed run lost
    cut = after[running[victim].number]
    assert cut.interrupted
    retries = [r for r in after.values() if r.attrs.get("retry_of") == cut.number]
    assert len(retries) == 1 and retries[0].state == "COMPLETE" and "CANCELLED" in retries[0].attrs["retry_reason"]
    keys = [r.key for r in store.search_trials() if r.cost_runs and r.state == "COMPLETE"]
    assert len(keys) == len(set(keys))  # no configuration measured twice
    # Slurm's accounting shows the two workers' jobs
    acct = subprocess.run(["sacct", "-c", "-n", "-P", "-o", "JobID,JobName,State"], capture_output=True, text=True)
    names = [line for line in acct.stdout.splitlines() if f"iotuner-{study}" in line]
    assert len(names) >= 2 and any("CANCELLED" in line for line in names), acct.stdout


# ---- the dashboard ----

def test_the_dashboard_shows_kinds_plain_settings_and_the_confirmed_winner(tmp_path):
    pytest.importorskip("optuna_dashboard")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "iotuner", "tune", "--synthetic", "ufs", "--trials", "10", "--study",
                        "dash", "--out", out], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "iotuner", "dashboard", "--out", out, "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def study():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/studies/1?after=0", timeout=2) as f:
                    return json.load(f)
            except OSError:
                return None
        data = wait_for(study, 60, "the dashboard")
    finally:
        server.terminate()
        server.wait()
    kinds = {next(a["value"] for a in t["user_attrs"] if a["key"] == "kind") for t in data["trials"]}
    assert {"baseline", "trial", "confirmation"} <= kinds
    values = {p["param_external_value"] for t in data["trials"] for p in t["params"] if p["name"] == "mpiio.romio_cb_write"}
    assert values <= {"automatic", "enable", "disable"}  # plain strings, not JSON-quoted
    summary = json.loads((out / "summary.json").read_text())
    assert f"Confirmed winner: search trial {summary['winner']['trial']}" in data["note"]["body"]
    assert data["objective_names"] == ["perf (MiB/s)"]
