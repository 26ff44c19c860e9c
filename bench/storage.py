#!/usr/bin/env python3
"""How many workers one study storage serves: SQLite (WAL) against PostgreSQL.

For each storage and number of workers (8, 32, 64 by default), a study of the
synthetic objective whose every run takes --delay seconds (a stand-in for the
application) is worked on by that many local worker processes at once, each
the tuner's own search loop. Every worker times its asks and tells; at the end
the script prints completed trials per second (against the ideal, workers /
delay), the ask and tell latency percentiles, and what went wrong: runs lost
(a worker measured a point but the study has no record of it), configurations
measured twice, trials left running.

The PostgreSQL server is a throw-away one started by scripts/postgres.sh. The
workers are processes of this 2-core machine: past a few workers they share
the cores with the database, so the figures are a lower bound of what a
server on its own machine sustains.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worker(args) -> int:
    """One worker: wait for the start signal, search, and write timings."""
    from iotuner.tune import objective, space as spaces, store as stores, strategies, synthetic, tuner
    store = stores.Store.open(args.storage, args.study, heartbeat_s=10)
    times = {"ask": [], "tell": []}
    real_ask, real_tell = store.ask, store.tell

    def ask(*a, **kw):
        t0 = time.perf_counter()
        try:
            return real_ask(*a, **kw)
        finally:
            times["ask"].append(time.perf_counter() - t0)

    def tell(*a, **kw):
        t0 = time.perf_counter()
        try:
            return real_tell(*a, **kw)
        finally:
            times["tell"].append(time.perf_counter() - t0)
    store.ask, store.tell = ask, tell
    c = store.config
    sp = spaces.from_json(c.space)
    obj = objective.parse("perf")
    measured = []

    class Logged(synthetic.SyntheticEvaluator):
        def evaluate(self, doc, label):
            m = super().evaluate(doc, label)
            if label.startswith("t"):
                measured.append(json.dumps({k: v for k, v in sorted(__import__("iotuner").settings.flatten(doc)
                                                                   .items())}, sort_keys=True))
            return m
    ev = Logged(synthetic.model("ufs"), obj, 0.05, args.delay, c.seed + os.getpid())
    t = tuner.Tuner(store, ev, sp, obj, strategies.make("random", sp, store.worker_seed(c.seed)))
    go = Path(args.go)
    while not go.exists():
        time.sleep(0.05)
    store.begin_session()
    start = time.time()
    t.search()
    Path(args.result).write_text(json.dumps({"ask": times["ask"], "tell": times["tell"], "measured": measured,
                                             "start": start, "end": time.time()}))
    return 0


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))] if xs else float("nan")


def one(storage: str, name: str, workers: int, per_worker: int, delay: float) -> dict:
    from iotuner.tune import config as cfg, objective, space as spaces, store as stores, strategies, synthetic, tuner
    sp = spaces.load("tunio")  # 3.6 million points: collisions between random workers are rare
    obj = objective.parse("perf")
    config = cfg.StudyConfig(space=sp.to_json(), strategy="random", synthetic=cfg.SyntheticSpec("ufs", 0.05, delay),
                             objective=cfg.ObjectiveSpec(obj.name, obj.direction, obj.unit), baseline_every=0)
    store = stores.Store.create(storage, name, config, cfg.Budget(workers * per_worker, None), heartbeat_s=10)
    t = tuner.Tuner(store, synthetic.SyntheticEvaluator(synthetic.model("ufs"), obj, 0.05, 0.0, 0), sp, obj,
                    strategies.make("random", sp, 0))
    store.begin_session()
    t._measure_default()  # once, before the workers
    with tempfile.TemporaryDirectory() as tmp:
        go = Path(tmp) / "go"
        procs = [subprocess.Popen([sys.executable, __file__, "--worker", "--storage", storage, "--study", name,
                                   "--delay", str(delay), "--go", str(go), "--result", f"{tmp}/w{i}.json"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for i in range(workers)]
        time.sleep(2.0 + 0.15 * workers)  # every worker started and waiting (imports take a while on 2 cores)
        go.touch()
        errors = [p.communicate()[1] for p in procs]
        results = [json.loads(Path(f"{tmp}/w{i}.json").read_text()) for i in range(workers)
                   if Path(f"{tmp}/w{i}.json").exists()]
    failed = [e.strip().splitlines()[-1] for e, p in zip(errors, procs) if p.returncode]
    store.refresh()
    trials = [r for r in store.search_trials() if r.state == "COMPLETE" and r.cost_runs]
    recorded = {r.key for r in trials}
    measured = [m for r in results for m in r["measured"]]
    start = min(r["start"] for r in results)
    end = max(r["end"] for r in results)
    return {"workers": workers, "trials": len(trials), "seconds": end - start,
            "per_s": len(trials) / (end - start), "ideal_per_s": workers / delay,
            "ask": [x for r in results for x in r["ask"]], "tell": [x for r in results for x in r["tell"]],
            "lost": len(set(measured) - recorded), "twice": len(measured) - len(set(measured)),
            "running": sum(1 for r in store.records() if r.state == "RUNNING"), "failed_workers": failed}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, nargs="+", default=[8, 32, 64])
    ap.add_argument("--per-worker", type=int, default=6, help="trials per worker (default 6)")
    ap.add_argument("--delay", type=float, default=1.0, help="seconds per run (default 1.0)")
    ap.add_argument("--storages", nargs="+", default=["sqlite", "postgresql"])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for hidden in ("--storage", "--study", "--go", "--result"):
        ap.add_argument(hidden, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.worker:
        return worker(opts)
    print(f"study storage under load: local workers, runs of {opts.delay} s, {opts.per_worker} trials per worker, "
          f"the random strategy (fast: the storage is what is measured)")
    print(f"  {'storage':11s} {'workers':>7s} {'trials/s':>9s} {'ideal':>6s} {'ask p50':>8s} {'ask p95':>8s} "
          f"{'tell p50':>9s} {'tell p95':>9s} {'lost':>5s} {'twice':>6s} {'left running':>13s}")
    with tempfile.TemporaryDirectory(prefix="iotuner-bench-") as tmp:
        pg_dir = Path(tempfile.mkdtemp(prefix="iotuner-pg-"))
        pg_url = None
        try:
            for kind in opts.storages:
                for n in opts.workers:
                    if kind == "postgresql":
                        if pg_url is None:
                            pg_url = subprocess.run([str(ROOT / "scripts" / "postgres.sh"), "start", str(pg_dir)],
                                                    capture_output=True, text=True, check=True).stdout.strip()
                        url = pg_url
                    else:
                        url = f"sqlite:///{tmp}/{kind}-{n}.db"
                    r = one(url, f"load-{kind}-{n}", n, opts.per_worker, opts.delay)
                    ms = lambda xs, q: f"{1000 * pct(xs, q):.0f}ms"  # noqa: E731
                    print(f"  {kind:11s} {n:7d} {r['per_s']:9.2f} {r['ideal_per_s']:6.1f} {ms(r['ask'], .5):>8s} "
                          f"{ms(r['ask'], .95):>8s} {ms(r['tell'], .5):>9s} {ms(r['tell'], .95):>9s} "
                          f"{r['lost']:5d} {r['twice']:6d} {r['running']:13d}", flush=True)
                    for f in r["failed_workers"]:
                        print(f"      a worker failed: {f}")
        finally:
            subprocess.run([str(ROOT / "scripts" / "postgres.sh"), "stop", str(pg_dir)], capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
