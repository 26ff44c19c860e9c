#!/usr/bin/env python3
"""Search strategies compared side by side.

Synthetic: for each strategy and seed, a study of the synthetic objective
(the tuner as it runs: noisy measurements, deduplication, one run per new
configuration) with a budget of runs. We count the evaluations (application
runs of the search) until a configuration whose noise-free value is within 95%
of the best known value, the space's exact optimum, has been measured, and
print the median over seeds. A seed that never got there counts as more than
the budget (a censored median).

Real (on by default; --no-real skips it): the same strategies tuning the
IOR-like kernel h5ior on this machine, writing to /dev/shm, from a baseline
that forces ROMIO's collective buffering through one aggregator. For each:
the confirmed gain over the baseline, the trial runs until the confirmed
winner was first run (repeats and deduplicated runs included, re-proposed
points cost none), the tuning time and the final RoTI; medians over seeds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import optuna

from iotuner import native, settings
from iotuner.tune import config as cfg, objective, space as spaces, store as stores, strategies, synthetic, tuner

STRATEGIES = ("random", "ga", "ga-h5evolve", "bayes")
REAL_STRATEGIES = ("random", "ga", "bayes")
CASES = (("tunio", "lustre"), ("h5evolve", "lustre"), ("romio", "ufs"))


class Recorder:
    """Wraps the synthetic evaluator; remembers the noise-free value of every search run."""

    def __init__(self, inner: synthetic.SyntheticEvaluator):
        self.inner, self.objective = inner, inner.objective
        self.true_values: list[float] = []

    def evaluate(self, doc, label):
        m = self.inner.evaluate(doc, label)
        if label.startswith("t"):  # a trial's run, not the baseline's or the confirmation's
            self.true_values.append(self.inner.value(settings.flatten(doc)))
        return m


def evaluations_to_target(space_name: str, model_name: str, strategy: str, seed: int, budget: int,
                          noise: float) -> int | None:
    sp, mod = spaces.load(space_name), synthetic.model(model_name)
    target = 0.95 * mod.best(sp)
    obj = objective.parse("perf")
    config = cfg.StudyConfig(space=sp.to_json(), strategy=strategy, seed=seed, synthetic=cfg.SyntheticSpec(model_name),
                             objective=cfg.ObjectiveSpec(obj.name, obj.direction, obj.unit), repeats=1,
                             baseline_every=0, confirm_top=1, confirm_rounds=1)
    store = stores.Store.create(optuna.storages.InMemoryStorage(), f"{space_name}-{strategy}-{seed}", config,
                                cfg.Budget(budget, None))
    rec = Recorder(synthetic.SyntheticEvaluator(mod, obj, noise, 0.0, seed))
    t = tuner.Tuner(store, rec, sp, obj, strategies.make(strategy, sp, seed))
    t.run()
    return next((i for i, v in enumerate(rec.true_values, start=1) if v >= target), None)


def synthetic_part(opts) -> None:
    print(f"synthetic objective: evaluations until a configuration within 95% of the best known value (the "
          f"exact optimum) was measured\n(median over {opts.seeds} seeds; budget {opts.budget} evaluations; "
          f"noise sigma {opts.noise})")
    print(f"  {'space / model':22s}" + "".join(f"{s:>19s}" for s in opts.strategies))
    for space_name, model_name in CASES:
        row = []
        for strategy in opts.strategies:
            counts = [evaluations_to_target(space_name, model_name, strategy, seed, opts.budget, opts.noise)
                      for seed in range(opts.seeds)]
            reached = sorted(c for c in counts if c is not None)
            missed = len(counts) - len(reached)
            med = statistics.median(reached + [opts.budget + 1] * missed)  # misses: more than the budget
            cell = f">{opts.budget}" if med > opts.budget else f"{med:g}"
            row.append(f"{cell} ({missed} missed)" if missed else cell)
        print(f"  {space_name + ' / ' + model_name:22s}" + "".join(f"{c:>19s}" for c in row), flush=True)


def runs_to_winner(out: Path, summary: dict) -> int | None:
    """Trial runs (repeats and deduplicated runs included) until the confirmed winner's first trial ran."""
    if not summary["verdict"] or not summary["verdict"]["significant"]:
        return None
    store = stores.Store.open(f"sqlite:///{out / 'study.db'}", summary["study"], heartbeat_s=None)
    return sum(r.cost_runs for i, r in enumerate(store.search_trials()) if i <= summary["winner"]["trial"])


def real_part(opts) -> None:
    app = [str(native.executable("h5ior")), "-b", "32M", "-x", "1M", "-o", "{scratch}"]
    print(f"\nreal kernel: h5ior -b 32M -x 1M on 2 ranks, on /dev/shm, baseline romio_cb_write=enable (one "
          f"aggregator), space romio, {opts.real_trials} trials, seeds {list(range(opts.real_seeds))} (medians)")
    print(f"  {'strategy':12s} {'confirmed gain':>15s} {'trial runs to the winner':>25s} {'tuning time':>12s} "
          f"{'final RoTI (MB/s per minute)':>29s}")
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        baseline = Path(tmp) / "baseline.json"
        baseline.write_text(json.dumps({"version": 1, "mpiio": {"romio_cb_write": "enable"}}))
        for strategy in opts.real_strategies:
            gains, firsts, times, rotis = [], [], [], []
            for seed in range(opts.real_seeds):
                out = Path(tmp) / f"{strategy}-{seed}"
                r = subprocess.run([sys.executable, "-m", "iotuner", "tune", "--baseline", str(baseline),
                                    "--trials", str(opts.real_trials), "--strategy", strategy, "--seed", str(seed),
                                    "--objective", "write-bw", "--study", "s", "--out", str(out), "--scratch", scratch,
                                    "--", *app], capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f"tuning with {strategy} failed: {r.stderr[-2000:]}")
                summary = json.loads((out / "summary.json").read_text())
                significant = bool(summary["verdict"] and summary["verdict"]["significant"])
                gains.append(summary["verdict"]["gain"] if significant else 1.0)
                times.append(summary["tuning_time_s"])
                rotis.append(summary["roti"]["final"] or 0.0)
                n = runs_to_winner(out, summary)
                firsts.append(n if n is not None else float("inf"))
            first = statistics.median(firsts)
            first_text = "-" if first == float("inf") else f"{first:g}"
            print(f"  {strategy:12s} {statistics.median(gains):14.2f}x {first_text:>25s} "
                  f"{statistics.median(times):11.0f}s {statistics.median(rotis):29,.0f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10, help="seeds per strategy (default 10)")
    ap.add_argument("--budget", type=int, default=250, help="evaluations per synthetic study (default 250)")
    ap.add_argument("--noise", type=float, default=0.05, help="synthetic noise sigma (default 0.05)")
    ap.add_argument("--strategies", nargs="+", default=list(STRATEGIES))
    ap.add_argument("--no-real", dest="real", action="store_false",
                    help="skip the real-kernel comparison (about 2 minutes on 2 cores)")
    ap.add_argument("--real-strategies", nargs="+", default=list(REAL_STRATEGIES))
    ap.add_argument("--real-trials", type=int, default=15)
    ap.add_argument("--real-seeds", type=int, default=2)
    opts = ap.parse_args()
    if opts.seeds < 10:
        print("note: fewer than 10 seeds gives a rough median", file=sys.stderr)
    start = time.time()
    synthetic_part(opts)
    if opts.real:
        real_part(opts)
    print(f"\n({time.time() - start:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
