"""The study storage: incremental derivation, a bounded number of statements per trial, leases taken
atomically, trials re-queued when their worker dies, the schema created once, secrets kept out of sight."""

import json
import multiprocessing
import os
import random
import subprocess
import sys

import optuna
import pytest

from iotuner.tune import store as stores
from iotuner.tune.store import DEFAULT
from iotuner.tune.study import derive, urls
from iotuner.tune.study.records import BASELINE, TRIAL, Record
from tune_helpers import make_study


def _record(i, kind=TRIAL, state="COMPLETE", sig=None, runs=(1.0,), end=None, dup=None, key=None, cost=1):
    settings = {"k": key if key is not None else i}
    return Record(
        id=i,
        number=i,
        kind=kind,
        state=state,
        settings=settings,
        runs=tuple(runs),
        signature=sig,
        error=None,
        duplicate_of=dup,
        cost_runs=cost,
        end=end if end is not None else i,
        duration_s=1.0,
        session="s",
        attrs={},
        key=json.dumps(settings, sort_keys=True),
    )


def test_derivation_is_the_same_whatever_order_records_arrive_in():
    rng = random.Random(3)
    recs = [_record(0, BASELINE, sig="{}", runs=(100.0,), end=0.5)]
    recs[0] = Record(**{**recs[0].__dict__, "attrs": {"reference": {"a": "1"}}})
    for i in range(1, 300):
        sig = f"s{rng.randrange(40)}"
        dup = DEFAULT if rng.random() < 0.05 else None
        recs.append(
            _record(
                i,
                sig=sig,
                runs=[rng.uniform(50, 200) for _ in range(rng.choice((1, 3)))],
                end=rng.uniform(1, 400),
                dup=dup,
                key=rng.randrange(60),
            )
        )
    failed = _record(300, state="FAIL", sig=None, runs=(), end=500.0, key=7)
    recs.append(Record(**{**failed.__dict__, "attrs": {"result": {"error": "crashed"}}}))
    ordered = derive.Derived("maximize")
    ordered.add(sorted(recs, key=lambda r: (r.end, r.id)))
    for _ in range(5):
        shuffled = recs[:]
        rng.shuffle(shuffled)
        d = derive.Derived("maximize")
        for chunk in range(0, len(shuffled), 17):  # in several reads, as workers finish
            d.add(shuffled[chunk : chunk + 17])
        assert {s: (sorted(p.runs), p.first, p.settings) for s, p in d.pools.items()} == {
            s: (sorted(p.runs), p.first, p.settings) for s, p in ordered.pools.items()
        }
        assert d.requested == ordered.requested and d.failed == ordered.failed == {failed.key: 300}
        assert sorted(d.default_runs) == sorted(ordered.default_runs)
        assert d.best().signature == ordered.ranked()[0].signature == ordered.best().signature
        assert d.trials_run == ordered.trials_run == 299 + 1
        assert d.reference == {"a": "1"}
        assert [p.record for p in d.trajectory([], None)] == [p.record for p in ordered.trajectory([], None)]


def test_the_tuning_clock_is_the_union_of_the_sessions():
    S = derive.Session
    sessions = [
        S("a", "h", 1, 0.0, 10.0),
        S("b", "h", 2, 5.0, 12.0),
        S("c", "h", 3, 20.0, 25.0),
        S("me", "h", 4, 30.0, 31.0),
    ]
    assert derive.clock_at([0, 5, 12, 15, 22, 25, 29, 40], sessions, "me") == [0, 5, 12, 12, 14, 17, 17, 27]


def _fill(store, n):
    """n completed search trials, as the tuner writes them, in one go."""
    backend, sid = store.db.backend, store.db.study_id
    dist = optuna.distributions.CategoricalDistribution(["a", "b"])
    for i in range(n):
        settings = {"x": i}
        backend.create(
            sid,
            "COMPLETE",
            {
                "settings": settings,
                "result": {
                    "settings": settings,
                    "runs": [float(i)],
                    "signature": json.dumps(settings),
                    "cost_runs": 1,
                    "duration_s": 0.1,
                    "end": 1.0 + i,
                },
            },
            params={"d": ("a", dist)},
            value=float(i),
        )


def _statements(store, work):
    import sqlalchemy

    count = [0]

    def one(*_):
        count[0] += 1

    engine = store.db.backend.engine
    sqlalchemy.event.listen(engine, "before_cursor_execute", one)
    try:
        work()
    finally:
        sqlalchemy.event.remove(engine, "before_cursor_execute", one)
    return count[0]


def test_statements_per_trial_do_not_grow_with_the_study(tmp_path):
    """The same search trial costs the same SQL statements in a study of 20 trials and in one of 2,000."""
    counts = []
    for n in (20, 2000):
        store, t = make_study(tmp_path, name=f"s{n}", trials=n + 2, baseline_every=0)
        store.workers.begin_session()
        t.search.measure_default()
        _fill(store, n)
        store.refresh()  # the study read once
        store.workers.heartbeat_s = None
        counts.append(_statements(store, lambda: t.search.run()))  # noqa: B023 - called at once  # two trials: read, ask, publish, tell
        assert store.trials.trials_run() == n + 2
    assert counts[0] == counts[1], counts
    assert counts[1] <= 2 * 25, counts  # about 20 statements a trial


def _race(args):
    url, name, barrier = args
    from iotuner.tune.study.storage import StudyStorage

    st, _ = StudyStorage.open(url, name)
    barrier.wait()
    return st.backend.swap_study_attr(st.companion_id, "lease:x", None, {"pid": os.getpid()})


@pytest.mark.parametrize("n", [6])
def test_a_lease_is_taken_by_exactly_one_of_several_processes(tmp_path, n):
    url = f"sqlite:///{tmp_path}/race.db"
    make_study(tmp_path, name="race", storage=url)
    with multiprocessing.get_context("fork").Manager() as m:
        barrier = m.Barrier(n)
        with multiprocessing.get_context("fork").Pool(n) as pool:
            won = pool.map(_race, [(url, "race", barrier)] * n)
    assert sum(won) == 1


def _create(args):
    url, name, barrier = args
    from tune_helpers import make_study as make

    barrier.wait()
    try:
        make(None, name=name, storage=url)
        return "ok"
    except Exception as e:  # the message, for the assertion
        return f"{type(e).__name__}: {e}"


def test_new_studies_created_at_once_in_a_new_sqlite_database(tmp_path):
    """Two processes that create the first studies of a new database do not collide in its schema."""
    for attempt in range(2):
        url = f"sqlite:///{tmp_path}/new-{attempt}.db"
        with multiprocessing.get_context("fork").Manager() as m:
            barrier = m.Barrier(3)
            with multiprocessing.get_context("fork").Pool(3) as pool:
                got = pool.map(_create, [(url, f"s{i}", barrier) for i in range(3)])
        assert got == ["ok"] * 3, got


def test_a_trial_whose_workers_die_is_run_again_up_to_three_starts(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/dead.db"
    survivor, t = make_study(tmp_path, name="dead", storage=url, trials=10)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a process of this host that is gone
    victim = stores.Store.open(url, "dead", heartbeat_s=None)
    monkeypatch.setattr(
        victim.workers, "owner", lambda: {"host": victim.workers.session.host, "pid": dead.pid, "session": "gone"}
    )
    dist = optuna.distributions.CategoricalDistribution(["enable", "disable"])
    point = {"mpiio.romio_cb_write": ("disable", dist)}
    asked = victim.ask(lambda trial, tid: point, lambda params: ({"mpiio.romio_cb_write": "disable"}, None))
    asked.heartbeat.stop()
    chain = [asked.number]
    for start in (2, 3):
        assert survivor.workers.recover() == [chain[-1]]  # failed as interrupted, queued to run again
        assert not survivor.workers.given_up
        owed = survivor.trials.owed()
        assert len(owed) == 1 and owed[0].attrs["retry_of"] == chain[-1] and owed[0].attrs["starts"] == start
        victim.refresh()
        again = victim.ask(lambda trial, tid: pytest.fail("a queued trial is run as it is"), lambda p: pytest.fail())
        again.heartbeat.stop()
        assert again.number == owed[0].number and again.settings == {"mpiio.romio_cb_write": "disable"}
        assert again.params == {"mpiio.romio_cb_write": "disable"}
        chain.append(again.number)
    assert survivor.workers.recover() == [chain[-1]]  # the third start dies too: not run a fourth time
    assert survivor.workers.given_up == {chain[-1]}  # and the resume note says so (tuner.py), not "it runs again"
    assert not survivor.trials.owed()
    trials = {r.number: r for r in survivor.trials.search_trials()}
    assert [trials[n].state for n in chain] == ["FAIL"] * 3 and all(trials[n].interrupted for n in chain)
    assert survivor.trials.trials_run() == 0  # none of them counts against the budget


def test_best_trial_of_the_study_is_a_search_trial(tmp_path):
    """Optuna's own best trial (study.best_trial, `optuna best-trial`) is a point of the search, never a run
    of the default or of the confirmation round, which live in the companion study."""
    store, t = make_study(tmp_path, name="best", trials=8, confirm_top=2)
    outcome = t.run()
    assert outcome.plan and store.trials.records("confirmation")
    best = store.study.best_trial
    assert best.params and "result" in best.user_attrs
    assert best.number in {r.number for r in store.trials.search_trials()}
    r = subprocess.run(
        [
            os.path.join(os.path.dirname(sys.executable), "optuna"),
            "best-trial",
            "--study-name",
            "best",
            "--storage",
            f"sqlite:///{tmp_path}/best.db",
            "-f",
            "json",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    shown = json.loads(r.stdout)
    assert shown["number"] == best.number and set(shown["params"]) == {d for d in best.params}


def test_urls_lose_their_password_everywhere():
    url = "postgresql+psycopg2://tuner:s3cr%40t@db.example.org:5432/tuning?sslmode=require"
    assert urls.password(url) == "s3cr%40t"
    assert urls.mask(url) == "postgresql+psycopg2://tuner:***@db.example.org:5432/tuning?sslmode=require"
    assert urls.mask("postgresql://tuner@db/t") == "postgresql://tuner@db/t"
    assert urls.mask("sqlite:////tmp/a:b@c/study.db") == "sqlite:////tmp/a:b@c/study.db"
    import io

    sink = io.StringIO()
    out = urls.Redacting(sink, urls.secrets_of(url))
    out.write(f"cannot open {url}: password s3cr@t refused\n")
    assert "s3cr" not in sink.getvalue() and sink.getvalue().count("***") == 2
    assert "iotuner tune --resume --study s --storage postgresql+psycopg2://tuner:***@" in urls.resume_hint("s", url)


def test_a_lease_whose_heartbeat_stopped_is_taken_over_and_a_live_one_is_waited_for(tmp_path):
    import threading
    import time

    from iotuner.tune.study.leases import Lease

    store, _ = make_study(tmp_path, name="lease")
    backend, companion = store.db.backend, store.db.companion_id
    # a holder on another machine whose heartbeats stopped 100 s ago (the grace is 3 s)
    gone = Lease("confirmation-0", "elsewhere-session", "other-host", 1, 1, "held", time.time() - 100, 3.0, {})
    assert backend.swap_study_attr(companion, "lease:confirmation-0", None, gone.to_json())
    with store.workers.exclusive("confirmation-0", poll_s=0.05) as section:
        assert section.mine and section.restarted and section.lease.attempt == 2
    assert store.workers.lease("confirmation-0").state == "done"
    # a live holder elsewhere: this worker waits until it is done, then does not run the section
    live = Lease("training:x", "peer", "other-host", 1, 1, "held", time.time(), 30.0, {"n": 1})
    assert backend.swap_study_attr(companion, "lease:training:x", None, live.to_json())

    def finish():
        time.sleep(0.5)
        now = store.workers.leases.get("training:x")
        store.workers.leases.update(now, state="done")

    threading.Thread(target=finish).start()
    started = time.time()
    with store.workers.exclusive("training:x", poll_s=0.05) as section:
        assert not section.mine and section.lease.state == "done" and section.lease.content == {"n": 1}
    assert time.time() - started >= 0.4
    # a second taker of a lease already taken over loses: the update is conditional on what it saw
    assert store.workers.leases.take("confirmation-0", {}, over=gone) is None


def test_the_first_baseline_report_is_kept_for_every_worker(tmp_path):
    """The run report of the default's first run is kept in the study (compressed), so a worker that did
    not measure it (hybrid and auto model the application from it) reads the same report; later runs of
    the default do not add another."""
    store, _ = make_study(tmp_path, name="rep")
    report = {"kind": "iotuner-run-report", "phases": [{"id": i, "bytes_written": 1 << 20} for i in range(200)]}
    assert store.trials.baseline_report() is None
    store.add_run(BASELINE, settings={}, value=1.0, report=report)
    store.add_run(BASELINE, settings={}, value=1.1, report={"kind": "another"})
    peer = stores.Store.open(f"sqlite:///{tmp_path}/rep.db", "rep", heartbeat_s=None)
    assert peer.trials.baseline_report() == report
    assert [("report" in r.attrs) for r in peer.trials.records(BASELINE)] == [True, False]
    assert len(peer.trials.records(BASELINE)[0].attrs["report"]) < len(json.dumps(report)) / 4


def test_the_resume_note_says_a_thrice_interrupted_trial_is_given_up(tmp_path, monkeypatch):
    """The note of the session that finds a trial's third start dead: given up, not "it runs again"."""
    url = f"sqlite:///{tmp_path}/given.db"
    survivor, tuner = make_study(tmp_path, name="given", storage=url, trials=4)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    victim = stores.Store.open(url, "given", heartbeat_s=None)
    monkeypatch.setattr(
        victim.workers, "owner", lambda: {"host": victim.workers.session.host, "pid": dead.pid, "session": "gone"}
    )
    dist = optuna.distributions.CategoricalDistribution(["enable", "disable"])
    point = {"mpiio.romio_cb_write": ("disable", dist)}
    asked = victim.ask(lambda trial, tid: point, lambda params: ({"mpiio.romio_cb_write": "disable"}, None))
    asked.heartbeat.stop()
    number = asked.number
    for _ in (2, 3):
        assert survivor.workers.recover() == [number]
        victim.refresh()
        again = victim.ask(lambda trial, tid: pytest.fail(), lambda p: pytest.fail())
        again.heartbeat.stop()
        number = again.number
    outcome = tuner.run()  # its session finds the third start dead
    notes = " ".join(outcome.notes)
    assert f"trial {number} was left running by a stopped tuner" in notes, notes
    assert (
        "it is given up, not run again" in notes
        and f"trial {number} was left running by a stopped tuner: it runs again" not in notes
    )
