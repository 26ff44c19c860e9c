#!/usr/bin/env python3
"""How many workers one study storage serves, and whether the cost of a trial
grows with the study: SQLite (WAL) against PostgreSQL.

For each storage, number of workers (8, 32, 64 by default) and study size
(--trials, default 5,000), a study of the synthetic objective is filled with
that many search trials less the ones the workers will run (written straight
into Optuna's tables, in the format the tuner writes), then that many local
worker processes, each the tuner's own search loop, run --per-worker trials
each, every run taking --delay seconds (a stand-in for the application).
Every worker times its asks and tells and counts the SQL statements its
storage engine sends (its heartbeat thread included). At the end the script
prints completed trials per second (against the ideal, workers / delay), the
ask and tell latency percentiles, SQL statements per trial, and what went
wrong: runs lost (a worker measured a point but the study has no record of
it), configurations measured twice, trials left running. It also times the
creation of a study in a new SQLite database (the schema).

The PostgreSQL server is a throw-away one started by scripts/postgres.sh. The
workers are processes of this 2-core machine: past a few workers they share
the cores with the database, so the figures are a lower bound of what a
server on its own machine sustains. With --lock PATH, each measured phase
holds that lock (flock) from the start of its workers; filling the study does not.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def engine_of(store):
    """The SQLAlchemy engine under a store's Optuna storage (an RDBStorage)."""
    return store.storage.engine


def worker(args) -> int:
    """One worker: open the study, say it is ready, wait for the start signal, search, write timings."""
    import sqlalchemy

    from iotuner import settings
    from iotuner.tune import objective, strategies, synthetic, tuner
    from iotuner.tune import space as spaces
    from iotuner.tune import store as stores

    store = stores.Store.open(args.storage, args.study, heartbeat_s=10)
    times = {"ask": [], "tell": []}
    real_ask, real_tell = store.ask, store.tell

    def timed(kind, real):
        def call(*a, **kw):
            t0 = time.perf_counter()
            try:
                return real(*a, **kw)
            finally:
                times[kind].append(time.perf_counter() - t0)

        return call

    store.ask, store.tell = timed("ask", real_ask), timed("tell", real_tell)
    statements = [0]
    counting = [False]

    def count(*_):
        if counting[0]:
            statements[0] += 1

    sqlalchemy.event.listen(engine_of(store), "before_cursor_execute", count)
    c = store.config
    sp = spaces.from_json(c.space)
    obj = objective.parse("perf")
    measured = []

    class Logged(synthetic.SyntheticEvaluator):
        def evaluate(self, doc, label):
            m = super().evaluate(doc, label)
            if label.startswith("t"):
                measured.append(json.dumps(settings.flatten(doc), sort_keys=True))
            return m

    ev = Logged(synthetic.model("ufs"), obj, 0.05, args.delay, c.seed + os.getpid())
    t = tuner.Tuner(store, ev, sp, obj, strategies.make("random", sp, store.workers.worker_seed(c.seed)))
    Path(args.result + ".ready").touch()
    go = Path(args.go)
    while not go.exists():
        time.sleep(0.05)
    counting[0] = True
    store.workers.begin_session()
    start = time.time()
    t.search.run()
    end = time.time()
    counting[0] = False
    Path(args.result).write_text(
        json.dumps(
            {
                "ask": times["ask"],
                "tell": times["tell"],
                "measured": measured,
                "start": start,
                "end": end,
                "statements": statements[0],
                "trials": len(times["tell"]),
            }
        )
    )
    return 0


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))] if xs else float("nan")


def fill(store, space, n: int, seed: int) -> None:
    """n completed search trials of distinct random points, written in bulk into Optuna's tables, as the
    tuner records them (their settings, what took effect, one run each)."""
    import datetime as dt

    import sqlalchemy as sa
    from optuna.distributions import CategoricalDistribution, distribution_to_json
    from optuna.trial import TrialState

    from iotuner.settings import complete

    if n <= 0:
        return
    rng = random.Random(seed)
    dists = {d.name: (d, CategoricalDistribution(d.labels)) for d in space.dimensions}
    texts = {name: distribution_to_json(dist) for name, (_, dist) in dists.items()}
    from iotuner.tune.optuna_compat import stored_value, tables

    t = tables()
    T, P, V, A = t.trials, t.trial_params, t.trial_values, t.trial_user_attrs
    study_id = store.db.study_id
    now = time.time()
    with engine_of(store).begin() as conn:
        base = conn.execute(sa.select(sa.func.count()).select_from(T).where(T.c.study_id == study_id)).scalar()
        points, trials = [], []
        for i in range(n):
            labels = {name: rng.choice(d.labels) for name, (d, _) in dists.items()}
            when = dt.datetime.fromtimestamp(now - (n - i) * 0.01, dt.timezone.utc).replace(tzinfo=None)
            points.append((labels, complete(space.point_settings(space.decode(labels)), 1), rng.uniform(100, 2000)))
            trials.append(
                {
                    "number": base + i,
                    "study_id": study_id,
                    "state": TrialState.COMPLETE,
                    "datetime_start": when,
                    "datetime_complete": when,
                }
            )
        conn.execute(T.insert(), trials)
        ids = dict(
            conn.execute(sa.select(T.c.number, T.c.trial_id).where(T.c.study_id == study_id, T.c.number >= base)).all()
        )
        params, values, attrs = [], [], []
        for i, (labels, flat, value) in enumerate(points):
            tid, end = ids[base + i], now - (n - i) * 0.01
            params += [
                {
                    "trial_id": tid,
                    "param_name": name,
                    "param_value": dist.to_internal_repr(labels[name]),
                    "distribution_json": texts[name],
                }
                for name, (_, dist) in dists.items()
            ]
            stored, kind = stored_value(value)
            values.append({"trial_id": tid, "objective": 0, "value": stored, "value_type": kind})
            result = {
                "settings": flat,
                "runs": [value],
                "signature": json.dumps(flat, sort_keys=True),
                "cost_runs": 1,
                "duration_s": 1.0,
                "end": end,
            }
            attrs += [
                {"trial_id": tid, "key": k, "value_json": json.dumps(v)}
                for k, v in {
                    "settings": flat,
                    "owner": {"host": "fill", "pid": 0, "session": "fill"},
                    "result": result,
                }.items()
            ]
        conn.execute(P.insert(), params)
        conn.execute(V.insert(), values)
        conn.execute(A.insert(), attrs)


@contextlib.contextmanager
def held(lock: str | None):
    if not lock:
        yield
        return
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def one(storage: str, name: str, workers: int, per_worker: int, size: int, delay: float, lock: str | None) -> dict:
    from iotuner.tune import objective, strategies, synthetic, tuner
    from iotuner.tune import space as spaces
    from iotuner.tune import store as stores
    from iotuner.tune import study_config as cfg

    sp = spaces.load("tunio")  # 3.6 million points: collisions between random workers are rare
    obj = objective.parse("perf")
    config = cfg.StudyConfig(
        space=sp.to_json(),
        strategy="random",
        synthetic=cfg.SyntheticSpec("ufs", 0.05, delay),
        objective=cfg.ObjectiveSpec(obj.name, obj.direction, obj.unit),
        baseline_every=0,
    )
    prefilled = max(0, size - workers * per_worker)
    store = stores.Store.create(
        storage, name, config, cfg.Budget(prefilled + workers * per_worker, None), heartbeat_s=10
    )
    t = tuner.Tuner(
        store,
        synthetic.SyntheticEvaluator(synthetic.model("ufs"), obj, 0.05, 0.0, 0),
        sp,
        obj,
        strategies.make("random", sp, 0),
    )
    store.workers.begin_session()
    t.search.measure_default()  # once, before the workers
    fill(store, sp, prefilled, hash(name) % 1000)
    with tempfile.TemporaryDirectory() as tmp, held(lock):  # the workers' start loads the machine too
        go = Path(tmp) / "go"
        python = [sys.executable] + (["-S"] if sys.flags.no_site else [])  # -S: a tree of the code as it was
        procs = [
            subprocess.Popen(
                [
                    *python,
                    __file__,
                    "--worker",
                    "--storage",
                    storage,
                    "--study",
                    name,
                    "--delay",
                    str(delay),
                    "--go",
                    str(go),
                    "--result",
                    f"{tmp}/w{i}.json",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(workers)
        ]
        while (
            sum(Path(f"{tmp}/w{i}.json.ready").exists() for i in range(workers))
            + sum(p.poll() is not None for p in procs)
            < workers
        ):
            time.sleep(0.1)  # every worker has opened the study (imports take a while on 2 cores)
        go.touch()
        errors = [p.communicate()[1] for p in procs]
        results = [
            json.loads(Path(f"{tmp}/w{i}.json").read_text())
            for i in range(workers)
            if Path(f"{tmp}/w{i}.json").exists()
        ]
    failed = [e.strip().splitlines()[-1] for e, p in zip(errors, procs) if p.returncode]
    store.refresh()
    trials = [r for r in store.trials.search_trials() if r.state == "COMPLETE" and r.cost_runs]
    recorded = {r.key for r in trials}
    measured = [m for r in results for m in r["measured"]]
    start = min(r["start"] for r in results)
    end = max(r["end"] for r in results)
    ran = sum(r["trials"] for r in results)
    return {
        "workers": workers,
        "size": len(trials),
        "prefilled": prefilled,
        "trials": ran,
        "seconds": end - start,
        "per_s": ran / (end - start),
        "ideal_per_s": workers / delay,
        "ask": [x for r in results for x in r["ask"]],
        "tell": [x for r in results for x in r["tell"]],
        "statements": sum(r["statements"] for r in results) / max(1, ran),
        "lost": len(set(measured) - recorded),
        "twice": len(measured) - len(set(measured)),
        "running": sum(1 for r in store.trials.records() if r.state == "RUNNING"),
        "failed_workers": failed,
    }


def schema_time(tmp: str) -> float:
    """Seconds to create a study in a new SQLite database (the schema, then the study)."""
    from iotuner.tune import objective
    from iotuner.tune import space as spaces
    from iotuner.tune import store as stores
    from iotuner.tune import study_config as cfg

    sp = spaces.load("romio")
    obj = objective.parse("perf")
    config = cfg.StudyConfig(
        space=sp.to_json(),
        strategy="random",
        synthetic=cfg.SyntheticSpec("ufs", 0.05, 0.0),
        objective=cfg.ObjectiveSpec(obj.name, obj.direction, obj.unit),
    )
    t0 = time.perf_counter()
    stores.Store.create(f"sqlite:///{tmp}/schema.db", "schema", config, cfg.Budget(1, None), heartbeat_s=10)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, nargs="+", default=[8, 32, 64])
    ap.add_argument(
        "--trials",
        type=int,
        nargs="+",
        default=[5000],
        help="study sizes: search trials in the study when the workers are done (default 5000)",
    )
    ap.add_argument("--per-worker", type=int, default=4, help="trials each worker runs (default 4)")
    ap.add_argument("--delay", type=float, default=1.0, help="seconds per run (default 1.0)")
    ap.add_argument("--storages", nargs="+", default=["sqlite", "postgresql"])
    ap.add_argument("--lock", metavar="PATH", help="hold this lock (flock) while measuring")
    ap.add_argument("--json", metavar="FILE", help="also write the figures here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for hidden in ("--storage", "--study", "--go", "--result"):
        ap.add_argument(hidden, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.worker:
        return worker(opts)
    rows = []
    with tempfile.TemporaryDirectory(prefix="iotuner-bench-") as tmp:
        with held(opts.lock):
            print(f"creating a study in a new SQLite database: {schema_time(tmp):.2f} s", flush=True)
        print(
            f"study storage under load: local workers, runs of {opts.delay} s, {opts.per_worker} trials per "
            f"worker, the random strategy (fast: the storage is what is measured)"
        )
        print(
            f"  {'storage':11s} {'workers':>7s} {'trials':>7s} {'trials/s':>9s} {'ideal':>6s} {'ask p50':>8s} "
            f"{'ask p95':>8s} {'tell p50':>9s} {'tell p95':>9s} {'SQL/trial':>9s} {'lost':>5s} {'twice':>6s} "
            f"{'left running':>13s}",
            flush=True,
        )
        pg_dir = Path(tempfile.mkdtemp(prefix="iotuner-pg-"))
        pg_url = None
        try:
            for kind in opts.storages:
                for size in opts.trials:
                    for n in opts.workers:
                        if kind == "postgresql":
                            if pg_url is None:
                                pg_url = subprocess.run(
                                    [str(ROOT / "scripts" / "postgres.sh"), "start", str(pg_dir)],
                                    capture_output=True,
                                    text=True,
                                    check=True,
                                ).stdout.strip()
                            url = pg_url
                        else:
                            url = f"sqlite:///{tmp}/{kind}-{n}-{size}.db"
                        r = one(url, f"load-{kind}-{n}-{size}", n, opts.per_worker, size, opts.delay, opts.lock)
                        ms = lambda xs, q: f"{1000 * pct(xs, q):.0f}ms"  # noqa: E731
                        print(
                            f"  {kind:11s} {n:7d} {r['size']:7d} {r['per_s']:9.2f} {r['ideal_per_s']:6.1f} "
                            f"{ms(r['ask'], 0.5):>8s} {ms(r['ask'], 0.95):>8s} {ms(r['tell'], 0.5):>9s} "
                            f"{ms(r['tell'], 0.95):>9s} {r['statements']:9.0f} {r['lost']:5d} {r['twice']:6d} "
                            f"{r['running']:13d}",
                            flush=True,
                        )
                        for f in r["failed_workers"]:
                            print(f"      a worker failed: {f}")
                        rows.append(
                            {
                                "storage": kind,
                                **{k: v for k, v in r.items() if k not in ("ask", "tell")},
                                **{f"{k}_p{q}": pct(r[k], q / 100) for k in ("ask", "tell") for q in (50, 95)},
                            }
                        )
        finally:
            subprocess.run([str(ROOT / "scripts" / "postgres.sh"), "stop", str(pg_dir)], capture_output=True)
    if opts.json:
        Path(opts.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
