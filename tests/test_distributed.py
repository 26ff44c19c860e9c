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

from conftest import importorskip, kernel
from iotuner.tune import study_config as cfg
from iotuner.tune.launch import local, slurm
from iotuner.tune.store import Store

pytestmark = pytest.mark.slow  # Slurm and PostgreSQL on free ports, in directories of their own
ROOT = Path(__file__).resolve().parents[1]
ONE_AGGREGATOR = {"version": 1, "mpiio": {"romio_cb_write": "enable"}}


def script(name, *args, env=None):
    r = subprocess.run(
        [str(ROOT / "scripts" / name), *map(str, args)], capture_output=True, text=True, env=env, timeout=180
    )
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


SECRET = "Pw-7q-secret"


@pytest.fixture
def postgres_with_password():
    """A server whose role logs in with a password: (URL with the password, URL without it, its directory)."""
    if postgres_missing():
        pytest.skip("PostgreSQL is not installed (scripts/setup.sh installs it)")
    d = Path(tempfile.mkdtemp(prefix="iotuner-pg-"))
    url = script("postgres.sh", "start", d, "--password", SECRET)
    yield url, url.replace(f":{SECRET}@", "@"), d
    script("postgres.sh", "stop", d)


def test_postgres_sh_start_on_a_running_server_prints_its_url(postgres):
    url, d = postgres
    assert script("postgres.sh", "start", d) == url  # running: the same URL, nothing started
    script("postgres.sh", "halt", d)
    assert script("postgres.sh", "start", d) == url  # halted: started again, the same URL


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
    return subprocess.Popen(
        [sys.executable, "-m", "iotuner", "tune", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


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

HOSTILE = [
    "two words",
    "it's",
    'say "hi"',
    "a;b",
    "$(touch /tmp/iotuner-pwned)",
    "`id`",
    "line\nbreak",
    "*",
    "--",
    "$HOME",
    "back\\slash",
]
ECHO_APP = (
    "import json, os, sys\n"
    "json.dump({'argv': sys.argv[1:], 'cwd': os.getcwd()}, open(os.path.join(os.getcwd(), 'seen.json'), 'w'))\n"
    "print('bandwidth=1')\n"
)


def check_hostile(launcher, tmp_path):
    pwned = Path("/tmp/iotuner-pwned")
    pwned.unlink(missing_ok=True)
    app = tmp_path / "echo app.py"
    app.write_text(ECHO_APP)
    cwd = tmp_path / "run; $(id) 'q' \"d\"\nnl"
    cwd.mkdir()
    result = launcher.run(
        [sys.executable, str(app), *HOSTILE], config=None, report=cwd / "report.json", cwd=cwd, timeout=120
    )
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
    text = workers.worker_script(study, 7)
    assert storage not in text  # the workers get the URL in their environment
    probe = tmp_path / "probe.sh"  # the same script with a program that prints its arguments
    probe.write_text(
        text.replace(sys.executable, f"{sys.executable} -c 'import json,sys; print(json.dumps(sys.argv[1:]))'", 1)
    )
    r = subprocess.run(["sh", str(probe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    argv = json.loads(r.stdout)
    assert argv[argv.index("--study") + 1] == study and "--storage" not in argv
    assert not Path("/tmp/iotuner-pwned").exists()


# ---- PostgreSQL ----


def test_a_study_on_postgresql_survives_a_lost_connection(tmp_path, postgres):
    url, d = postgres
    args = [
        "--synthetic",
        "ufs",
        "--synthetic-delay",
        0.2,
        "--trials",
        20,
        "--study",
        "pg",
        "--storage",
        url,
        "--out",
        tmp_path / "out",
        "--heartbeat",
        1,
    ]
    proc = tune(*args)
    store = (
        Store.open(url, "pg", heartbeat_s=None) if wait_for(lambda: _has_study(url, "pg"), 60, "the study") else None
    )

    def done():
        store.refresh()
        return store.trials.trials_run() >= 5

    wait_for(done, 120, "5 trials")
    before = {r.id: r.runs for r in store.trials.records() if r.state == "COMPLETE"}
    script("postgres.sh", "halt", d)  # the server goes away mid-study
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "Traceback" not in err, err
    # one line that says what happened, and no statement SQLAlchemy failed with
    assert [line for line in err.splitlines() if line.strip()] == [
        next(line for line in err.splitlines() if "the study storage failed" in line)
    ], err
    assert "--resume" in err and not any(w in out + err for w in ("SELECT", "INSERT", "UPDATE", "[SQL"))
    script("postgres.sh", "start", d)
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", "--resume", "--study", "pg", "--storage", url, "--heartbeat", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    store = Store.open(url, "pg", heartbeat_s=None)
    after = {r.id: r.runs for r in store.trials.records() if r.state == "COMPLETE"}
    assert all(after[n] == runs for n, runs in before.items())  # nothing completed was lost
    assert store.trials.trials_run() == 20
    keys = [r.key for r in store.trials.search_trials() if r.cost_runs and r.state == "COMPLETE"]
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
SLOW_APP = (
    "import os, time\ntime.sleep(2 if os.path.basename(os.getcwd()).startswith('t') else 0)\nprint('bandwidth=100')\n"
)


def test_a_trial_whose_job_slurm_cancels_runs_again_once(tmp_path, cluster):
    app = tmp_path / "app.py"
    app.write_text(SLOW_APP)
    space = tmp_path / "space.json"
    space.write_text(
        json.dumps(
            {
                "name": "s",
                "dimensions": [{"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable", "disable"]}],
            }
        )
    )
    study = "cancelled"
    proc = tune(
        "--space",
        space,
        "--strategy",
        "grid",
        "--trials",
        2,
        "--launcher",
        "slurm",
        "--ranks",
        1,
        "--objective",
        "regex:bandwidth=([0-9.]+)",
        "--baseline-every",
        0,
        "--confirm-top",
        1,
        "--study",
        study,
        "--out",
        tmp_path / "out",
        "--",
        sys.executable,
        app,
    )
    # the first trial's job: cancel it while it runs (baseline first, then trials t0000...)
    storage = f"sqlite:///{tmp_path / 'out' / 'study.db'}"
    wait_for(lambda: _has_study(storage, study), 60, "the study")
    store = Store.open(storage, study, heartbeat_s=None)

    def trial_job():
        store.refresh()
        if not any(r.state == "RUNNING" for r in store.trials.search_trials()):
            return None
        running = [j for j, state in squeue(f"iotuner-{study}") if state == "RUNNING"]
        return running[0] if running else None

    job = wait_for(trial_job, 90, "a trial's job")
    subprocess.run(["scancel", job], check=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err + out[-2000:]
    store.refresh()
    cancelled = [r for r in store.trials.search_trials() if r.error and "CANCELLED" in r.error]
    assert len(cancelled) == 1 and cancelled[0].state == "FAIL"
    assert "the scheduler ended the job" in cancelled[0].error
    retries = [r for r in store.trials.search_trials() if r.attrs.get("retry_of") == cancelled[0].number]
    assert len(retries) == 1 and retries[0].state == "COMPLETE" and retries[0].settings == cancelled[0].settings
    assert store.trials.trials_run() == 2  # the cancelled run did not count against the budget: its retry did


def test_a_killed_tuner_leaves_no_job_and_resumes(tmp_path, cluster):
    app = tmp_path / "app.py"
    app.write_text(SLOW_APP)
    space = tmp_path / "space.json"
    space.write_text(
        json.dumps(
            {
                "name": "s",
                "dimensions": [
                    {"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable", "disable"]},
                    {"knob": "mpiio.romio_ds_write", "values": ["automatic", "enable", "disable"]},
                ],
            }
        )
    )
    study = "killed"
    args = ["--study", study, "--storage", f"sqlite:///{tmp_path / 'study.db'}"]
    proc = tune(
        "--space",
        space,
        "--strategy",
        "random",
        "--trials",
        4,
        "--launcher",
        "slurm",
        "--ranks",
        1,
        "--objective",
        "regex:bandwidth=([0-9.]+)",
        "--confirm-top",
        1,
        "--confirm-rounds",
        2,
        "--out",
        tmp_path / "out",
        *args,
        "--",
        sys.executable,
        app,
    )
    try:
        wait_for(lambda: _has_study(args[3], study), 60, "the study")
        store = Store.open(args[3], study, heartbeat_s=None)

        def trial_running():  # a trial's job, not the default's
            store.refresh()
            return any(r.state == "RUNNING" for r in store.trials.search_trials()) and [
                j for j, s in squeue(f"iotuner-{study}") if s == "RUNNING"
            ]

        wait_for(trial_running, 90, "a trial's running job")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        wait_for(lambda: not squeue(f"iotuner-{study}") or None, 15, "the study's jobs to be gone")
    finally:
        if proc.poll() is None:
            proc.kill()
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", "--resume", *args], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    store = Store.open(args[3], study, heartbeat_s=None)
    assert store.trials.trials_run() == 4
    assert any(rec.interrupted for rec in store.trials.search_trials())


@pytest.mark.serial  # a tuning judged on a measured gain
def test_two_workers_on_slurm_and_postgresql_tune_a_kernel_and_survive_a_cancelled_worker(tmp_path, cluster, postgres):
    url, _ = postgres
    baseline = tmp_path / "one-aggregator.json"
    baseline.write_text(json.dumps(ONE_AGGREGATOR))
    study = "twoworkers"
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        proc = tune(
            "--baseline",
            baseline,
            "--space",
            "romio",
            "--strategy",
            "random",
            "--trials",
            10,
            "--objective",
            "write-bw",
            "--launcher",
            "slurm",
            "--workers",
            2,
            "--submit",
            "--heartbeat",
            2,
            "--baseline-every",
            0,
            "--study",
            study,
            "--storage",
            url,
            "--out",
            tmp_path / "out",
            "--scratch",
            scratch,
            "--",
            kernel("h5ior"),
            "-b",
            "16M",
            "-t",
            "1M",
            "-o",
            "{scratch}",
        )
        try:
            wait_for(lambda: _has_study(url, study), 60, "the study")
            store = Store.open(url, study, heartbeat_s=None)

            def busy_workers():
                store.refresh()
                jobs = {
                    r.attrs["owner"].get("slurm_job")
                    for r in store.trials.search_trials()
                    if r.state == "RUNNING" and "settings" in r.attrs and store.trials.trials_run() >= 2
                }
                return sorted(j for j in jobs if j) if len(jobs) == 2 else None

            jobs = wait_for(busy_workers, 240, "two workers inside trials")
            before = {r.id: r.runs for r in store.trials.records() if r.state == "COMPLETE"}
            running = {r.attrs["owner"]["slurm_job"]: r for r in store.trials.search_trials() if r.state == "RUNNING"}
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
    after = {r.id: r for r in store.trials.records()}
    assert all(after[n].runs == runs for n, runs in before.items())  # no completed run lost
    cut = after[running[victim].id]
    assert cut.interrupted
    retries = [r for r in after.values() if r.attrs.get("retry_of") == cut.number]
    assert len(retries) == 1 and retries[0].state == "COMPLETE" and "CANCELLED" in retries[0].attrs["retry_reason"]
    keys = [r.key for r in store.trials.search_trials() if r.cost_runs and r.state == "COMPLETE"]
    assert len(keys) == len(set(keys))  # no configuration measured twice
    # Slurm's accounting shows the two workers' jobs
    acct = subprocess.run(["sacct", "-c", "-n", "-P", "-o", "JobID,JobName,State"], capture_output=True, text=True)
    names = [line for line in acct.stdout.splitlines() if f"iotuner-{study}" in line]
    assert len(names) >= 2 and any("CANCELLED" in line for line in names), acct.stdout


# ---- the dashboard ----


def test_the_dashboard_shows_kinds_plain_settings_and_the_confirmed_winner(tmp_path):
    importorskip("optuna_dashboard")
    out = tmp_path / "out"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--synthetic",
            "ufs",
            "--trials",
            "10",
            "--study",
            "dash",
            "--out",
            out,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "iotuner", "dashboard", "--out", out, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def get(path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as f:
                return json.load(f)
        except OSError:
            return None

    try:
        ids = {
            st["study_name"]: st["study_id"]
            for st in wait_for(lambda: get("/api/studies"), 60, "the dashboard")["study_summaries"]
        }
        data = get(f"/api/studies/{ids['dash']}?after=0")
        companion = get(f"/api/studies/{ids['dash.iotuner']}?after=0")
    finally:
        server.terminate()
        server.wait()

    def kinds(study):
        return {next((a["value"] for a in t["user_attrs"] if a["key"] == "kind"), "trial") for t in study["trials"]}

    # the study is its search trials (its best is one of them); the other runs are in its companion
    assert kinds(data) == {"trial"} and len(data["trials"]) == 10
    assert {"baseline", "confirmation"} <= kinds(companion)
    values = {
        p["param_external_value"] for t in data["trials"] for p in t["params"] if p["name"] == "mpiio.romio_cb_write"
    }
    assert values <= {"automatic", "enable", "disable"}  # plain strings, not JSON-quoted
    summary = json.loads((out / "summary.json").read_text())
    assert f"Confirmed winner: search trial {summary['winner']['trial']}" in data["note"]["body"]
    assert data["objective_names"] == ["perf (MiB/s)"]


# ---- one study, one answer ----


def _one_round(out: Path, logs: list[str], storage: str, study: str):
    """The study's confirmation: one round in trials.csv, none superseded, the same verdict printed by every
    process, the results written by one of them."""
    import csv

    rows = list(csv.DictReader(open(out / "trials.csv")))
    kinds = [r["kind"] for r in rows]
    assert "confirmation-superseded" not in kinds
    confirm = [r for r in rows if r["kind"] == "confirmation"]
    rounds = {r["round"] for r in confirm}
    candidates = {r["trial"] for r in confirm}
    assert confirm and len(confirm) == len(rounds) * len(candidates)  # each round: the default and each candidate
    store = Store.open(storage, study, heartbeat_s=None)
    assert len({r.attrs["plan"] for r in store.trials.records("confirmation")}) == 1
    lease = store.workers.lease("confirmation-0")
    assert lease.attempt == 1 and lease.state == "done" and lease.content["written"]
    assert store.workers.lease("confirmation-1") is None
    verdicts = [[line for line in log.splitlines() if line.startswith("best: ")] for log in logs]
    assert all(len(v) == 1 for v in verdicts) and len({v[0] for v in verdicts}) == 1, verdicts
    assert sum(log.count("wrote the results of study") for log in logs) == 1
    assert (out / "best.json").exists() and json.loads((out / "best.json").read_text())["meta"]["study"] == study
    return store


TINY = [
    "--space",
    "romio",
    "--strategy",
    "random",
    "--repeats",
    1,
    "--ranks",
    1,
    "--confirm-top",
    1,
    "--confirm-rounds",
    4,
    "--baseline-every",
    0,
    "--objective",
    "write-bw",
    "--heartbeat",
    2,
]


@pytest.mark.mpi
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_three_local_workers_run_one_confirmation_round(tmp_path, kind, request):
    storage = request.getfixturevalue("postgres")[0] if kind == "postgresql" else f"sqlite:///{tmp_path / 'study.db'}"
    baseline = tmp_path / "one-aggregator.json"
    baseline.write_text(json.dumps(ONE_AGGREGATOR))
    out = tmp_path / "out"
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "iotuner",
                "tune",
                *map(str, TINY),
                "--workers",
                "3",
                "--trials",
                "24",
                "--baseline",
                str(baseline),
                "--mpiexec",
                local.default_mpiexec(),
                "--study",
                "w3",
                "--storage",
                storage,
                "--out",
                str(out),
                "--scratch",
                scratch,
                "--",
                "h5ior",
                "-b",
                "256K",
                "-t",
                "64K",
                "-o",
                "{scratch}",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    logs = [r.stdout] + [(out / f"worker-{k}.log").read_text() for k in (1, 2)]
    assert r.returncode == 0, r.stderr + "\n".join(logs)
    store = _one_round(out, logs, storage, "w3")
    # the three worked on the study (each printed the verdict above); how the trials fell among them depends
    # on how fast each started: under load one may run every trial before the others import Python
    assert len(store.workers.sessions()) == 3
    # the budget is checked before a trial starts: workers starting in the same instant may each start one
    # (stop.TrialBudget), so at most one trial more per other worker
    assert 24 <= store.trials.trials_run() <= 24 + 2


def _cmdlines(pattern: str, root: int) -> dict[int, str]:
    """The command lines with pattern of root's descendants (other tests may run workers on this machine)."""
    parent, text = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            text[int(pid)] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parent[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])

    def descends(pid):
        seen = set()
        while pid in parent and pid not in seen:
            seen.add(pid)
            pid = parent[pid]
            if pid == root:
                return True
        return False

    return {pid: t for pid, t in text.items() if pattern in t and descends(pid)}


def test_the_storage_password_is_never_shown(tmp_path, postgres_with_password):
    url, _, _ = postgres_with_password
    out = tmp_path / "out"
    proc = tune(
        "--synthetic",
        "ufs",
        "--synthetic-delay",
        0.3,
        "--trials",
        12,
        "--workers",
        3,
        "--study",
        "secret",
        "--storage",
        url,
        "--out",
        out,
        "--heartbeat",
        1,
    )
    seen = {}
    try:
        end = time.time() + 120
        while proc.poll() is None and time.time() < end:
            seen.update(_cmdlines(" worker ", proc.pid))
            time.sleep(0.1)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    workers = {pid: c for pid, c in seen.items() if "iotuner worker" in c or "-m iotuner worker" in c}
    assert len(workers) == 2, seen
    assert all(SECRET not in c and "--storage" not in c for c in workers.values()), workers
    assert SECRET not in stdout + stderr and "iotuner:***@" in stdout
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"best.json", "summary.json", "trials.csv", "worker-1.log", "worker-2.log"}
    for p in files:
        assert SECRET.encode() not in p.read_bytes(), p
    # a wrong password: the error names the storage without showing what was given
    wrong = url.replace(SECRET, "Wr0ng-" + SECRET)
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", "--resume", "--study", "secret", "--storage", wrong],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "password authentication failed" in r.stderr, r.stderr
    assert SECRET not in r.stdout + r.stderr and "iotuner:***@" in r.stderr


def test_pgpassword_and_pgpass_give_the_password(tmp_path, postgres_with_password):
    url, bare, d = postgres_with_password
    common = ["--synthetic", "ufs", "--trials", 3, "--confirm-rounds", 2, "--confirm-top", 1]
    env = {k: v for k, v in os.environ.items() if k != "PGPASSWORD"}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            *map(str, common),
            "--study",
            "nopw",
            "--storage",
            bare,
            "--out",
            str(tmp_path / "a"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 2 and "password" in r.stderr  # no password anywhere: refused
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            *map(str, common),
            "--study",
            "env",
            "--storage",
            bare,
            "--out",
            str(tmp_path / "b"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "PGPASSWORD": SECRET},
    )
    assert r.returncode == 0, r.stderr
    home = tmp_path / "home"
    home.mkdir()
    port = bare.split("127.0.0.1:")[1].split("/")[0]
    (home / ".pgpass").write_text(f"127.0.0.1:{port}:iotuner:iotuner:{SECRET}\n")
    (home / ".pgpass").chmod(0o600)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            *map(str, common),
            "--study",
            "pgpass",
            "--storage",
            bare,
            "--out",
            str(tmp_path / "c"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "HOME": str(home)},
    )
    assert r.returncode == 0, r.stderr
    assert Store.open(url, "pgpass", heartbeat_s=None).trials.trials_run() == 3


def test_an_empty_storage_url_is_an_error_not_the_default(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--synthetic",
            "ufs",
            "--trials",
            "2",
            "--storage",
            "",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "--storage is empty" in r.stderr
    assert not (tmp_path / "out" / "study.db").exists()
    env = {**os.environ, "IOTUNER_STORAGE": " "}
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "worker", "--study", "x"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert r.returncode == 2 and "empty" in r.stderr


@pytest.mark.mpi
def test_two_workers_on_slurm_run_one_confirmation_round(tmp_path, cluster, postgres):
    url, _ = postgres
    baseline = tmp_path / "one-aggregator.json"
    baseline.write_text(json.dumps(ONE_AGGREGATOR))
    out = tmp_path / "out"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            *map(str, TINY),
            "--launcher",
            "slurm",
            "--workers",
            "2",
            "--submit",
            "--trials",
            "4",
            "--baseline",
            str(baseline),
            "--study",
            "s2",
            "--storage",
            url,
            "--out",
            str(out),
            "--",
            "h5ior",
            "-b",
            "256K",
            "-t",
            "64K",
            "-o",
            "{scratch}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    logs = sorted(out.glob("worker-*_*.log"))
    assert r.returncode == 0, r.stderr + r.stdout[-2000:] + "".join(p.read_text()[-2000:] for p in logs)
    assert len(logs) == 2
    # each worker prints the verdict, and so does the watcher; one of the workers wrote the results
    _one_round(out, [p.read_text() for p in logs] + [r.stdout], url, "s2")


def test_bundled_kernels_are_on_the_path_of_a_job_per_trial(tmp_path, cluster):
    out = tmp_path / "out"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            *map(str, TINY),
            "--launcher",
            "slurm",
            "--trials",
            "2",
            "--confirm-rounds",
            "2",
            "--study",
            "path",
            "--out",
            str(out),
            "--",
            "h5ior",
            "-b",
            "64K",
            "-t",
            "64K",
            "-o",
            "{scratch}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr + r.stdout[-3000:]
    store = Store.open(f"sqlite:///{out / 'study.db'}", "path", heartbeat_s=None)
    runs = store.trials.records()
    assert runs and all(rec.state == "COMPLETE" for rec in runs), [rec.error for rec in runs if rec.error]
    assert "No such file" not in r.stdout + r.stderr
