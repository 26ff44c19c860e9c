#!/usr/bin/env python3
"""Model-driven tuning (paper 001, Behzad et al., Cluster'15) side by side with
the search strategies, in paper 001's structure at our scale.

Targets: objectives whose every configuration's true value is known, so the
exhaustive best and every configuration's true rank are exact.
- romio / ufs: the synthetic model of this machine (iotuner.tune.synthetic)
  over the romio space (11,664 points);
- h5evolve / lustre: the synthetic Lustre model over H5Evolve's space
  (336,000 points);
- eq3: the paper's own fitted model of VPIC-IO on Edison (Eq. 3, its
  published coefficients) as the write time of stripe count c, stripe size s
  (MiB), aggregators a and file size f (GiB), over H5Evolve's c, s and a
  values (960 points at each file size);

Measurements are noisy (log-normal, sigma --noise). Three parts:
1. prediction quality against the training-set size (10, 20, 40, 80 points,
   space-filling design, one run each): on the configurations not trained
   on, R-squared of the time, mean absolute percentage error and Spearman
   rank correlation; and the true rank (1 = the optimum) of the best of the
   model's top k, k = 1, 5, 20;
2. evaluations (training included) until a configuration within 95% of the
   exhaustive best was measured: the model (training + top 20) against ga,
   ga-h5evolve and bayes, as in bench/strategies.py;
3. a warm start at a 4x larger problem size (eq3: f = 1024 GiB, then 4096
   GiB): evaluations to 95% of the larger size's best, with and without the
   saved model of the smaller size;
4. real runs: `iotuner tune` on the bundled h5ior kernel (2 ranks, /dev/shm,
   from the one-aggregator baseline, space romio), the model (training + top
   k) against ga with as many search runs: the confirmed gain, the runs and
   tuning time until the winner's first run, the whole study's time. Its
   run times depend on the machine: run it under the timing lock.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import optuna
from scipy.stats import spearmanr

from iotuner import native, settings
from iotuner.settings import as_text, complete
from iotuner.tune import objective, strategies, synthetic, tuner
from iotuner.tune import space as spaces
from iotuner.tune import store as stores
from iotuner.tune import study_config as cfg
from iotuner.tune.evaluate import Measurement
from iotuner.tune.store import canonical
from iotuner.tune.strategies.model import design, features, fit, rank

MIB = 1024 * 1024
SIZES = (10, 20, 40, 80)
HELD_OUT = 20000  # configurations predicted per fit in part 1 (all of a smaller space)
KS = (1, 5, 20)
RIVALS = ("ga", "ga-h5evolve", "bayes")


# ---- targets: every point's true value known ----


def eq3_time(c: float, s: float, a: float, f: float) -> float:
    """Paper 001, Eq. 3 (VPIC-IO on Edison): write time in s; s in MB, f in GB."""
    return 10.59 + 68.99 / s + 59.83 / a - 1.23 * c / s + 2.26 * f / c + 0.18 * f / s + 0.01 * c * f / a


def eq3_space() -> spaces.SearchSpace:
    """H5Evolve's stripe counts, stripe sizes (MiB) and aggregators, up to 256 (960 points)."""
    h = spaces.h5evolve()
    return spaces.SearchSpace(
        "eq3",
        [h.dimension("lustre.stripe_count"), h.dimension("stripe_and_cb_size"), h.dimension("mpiio.cb_nodes")],
        "paper 001 Eq. 3's parameters",
    ).validate()


@dataclass
class Target:
    name: str
    space: spaces.SearchSpace
    truth: Callable[[Mapping[str, Any]], float]  # flat settings -> noise-free value (MB/s, higher is better)
    size_mib: float | None = None  # the problem size the runs report (None: none)
    ranks: int = 2
    effective: Callable[[Mapping[str, Any]], dict] | None = None  # what takes effect (default: what is asked)
    objective: str = "write-bw"

    def evaluator(self, noise: float, seed: int) -> Evaluator:
        return Evaluator(self, noise, seed)

    def points(self):
        return [
            dict(zip([d.name for d in self.space.dimensions], combo))
            for combo in itertools.product(*(d.values for d in self.space.dimensions))
        ]


class Evaluator:
    """Answers a run of a target: its true value times log-normal noise, with the
    problem size in the details, as a run report would give it."""

    def __init__(self, target: Target, noise: float, seed: int):
        self.target, self.noise, self.seed = target, noise, seed
        self.objective = objective.parse(target.objective)
        self.runs: list[tuple[str, float]] = []  # (label, true value) of every run
        self.notes: list[str] = []

    def evaluate(self, doc: dict, label: str) -> Measurement:
        flat = settings.flatten(doc)
        true = self.target.truth(flat)
        rng = random.Random(f"{self.seed}:{label}")
        value = true * math.exp(rng.gauss(0.0, self.noise))
        self.runs.append((label, true))
        details = {}
        if self.target.size_mib:
            details = {"bytes_written": int(self.target.size_mib * MIB), "bytes_read": 0, "ranks": self.target.ranks}
        eff = self.target.effective(flat) if self.target.effective else complete(flat)
        mine = {k: [as_text(eff[k])] for k in sorted(complete(flat)) if k in eff}
        return Measurement(True, value, 0.0, effective=mine, details=details)


def synthetic_target(model_name: str, space_name: str) -> Target:
    m = synthetic.model(model_name)
    return Target(f"{space_name} / {model_name}", spaces.load(space_name), m.value, effective=m.effective)


def eq3_target(f_gib: float) -> Target:
    sp = eq3_space()

    def truth(flat):
        # the default: Lustre's layout (one stripe of 1 MiB) and one aggregator
        c = float(flat.get("lustre.stripe_count", 1))
        s = float(flat.get("lustre.stripe_size", MIB)) / MIB
        a = float(flat.get("mpiio.cb_nodes", 1))
        return f_gib * 1024 * MIB / 1e6 / eq3_time(c, s, a, f_gib)

    return Target(f"eq3, f = {f_gib:g} GiB", sp, truth, size_mib=f_gib * 1024, ranks=4096)


_TRUTHS: dict[str, tuple[list[dict], np.ndarray]] = {}


def truths(target: Target) -> tuple[list[dict], np.ndarray]:
    """Every point of the target's space and its true value (computed once)."""
    if target.name not in _TRUTHS:
        pts = target.points()
        _TRUTHS[target.name] = pts, np.array([target.truth(complete(target.space.point_settings(p))) for p in pts])
    return _TRUTHS[target.name]


# ---- part 1: prediction quality ----


def quality(target: Target, n: int, seed: int, noise: float, pts, vals) -> dict:
    sp = target.space
    enc = features.Encoding(sp)
    train = design.training_set(sp, n, seed)
    ev = target.evaluator(noise, seed)
    measured = np.array(
        [ev.evaluate(settings.from_flat(sp.point_settings(p)), f"training-{i:03d}").value for i, p in enumerate(train)]
    )
    mb = target.size_mib * MIB / 1e6 if target.size_mib else 1.0
    scale = {"size_mib": target.size_mib, "ranks": target.ranks} if target.size_mib else {}
    table = enc.table(train, [scale] * len(train))
    model = fit.select(table, mb / measured, enc.candidates(table), seed=seed)
    keys = {canonical(complete(sp.point_settings(p))) for p in train}
    sample = np.random.default_rng(seed).permutation(len(pts))[: HELD_OUT + n]  # all of a small space
    held = [i for i in sample if canonical(complete(sp.point_settings(pts[i]))) not in keys][:HELD_OUT]
    hp = [pts[i] for i in held]
    pred_t = model.predict(enc.table(hp, [scale] * len(hp)), len(hp))
    true_t = mb / vals[held]
    r2 = 1 - np.sum((pred_t - true_t) ** 2) / np.sum((true_t - true_t.mean()) ** 2)
    mape = float(np.mean(np.abs(pred_t - true_t) / true_t))
    rho = float(spearmanr(pred_t, true_t)[0]) if np.ptp(pred_t) > 0 else 0.0
    best = max(zip(measured, train), key=lambda x: x[0])[1]
    ranking = rank.top(
        model, enc, max(KS), best, scale, skip=lambda p: canonical(complete(sp.point_settings(p))) in keys, seed=seed
    )
    top_true = [target.truth(complete(sp.point_settings(p))) for p, _ in ranking.points]
    ranks = {k: int(np.sum(vals > max(top_true[:k]))) + 1 for k in KS}
    share = {k: max(top_true[:k]) / float(vals.max()) for k in KS}
    return {"r2": r2, "mape": mape, "rho": rho, "ranks": ranks, "share": share, "terms": len(model.terms)}


def part1(targets, seeds, noise) -> None:
    print(
        f"1. prediction quality against the training-set size (medians of {seeds} seeds), on configurations "
        f"not trained on\n   (all of them, or {HELD_OUT:,} at random); rank: the true rank of the best of the "
        f"model's top k (1 = the optimum)"
    )
    print(
        f"  {'target':26s} {'N':>3s} {'terms':>5s} {'R2':>6s} {'MAPE':>7s} {'Spearman':>8s}   "
        + "  ".join(f"{'top ' + str(k) + ': rank (% of best)':>24s}" for k in KS)
    )
    for target in targets:
        pts, vals = truths(target)
        for n in SIZES:
            rows = [quality(target, n, s, noise, pts, vals) for s in range(seeds)]
            med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731, B023 - used inside this iteration
            ranks = [
                "{:>24s}".format(
                    f"{statistics.median(r['ranks'][k] for r in rows):g} "
                    f"({100 * statistics.median(r['share'][k] for r in rows):.0f}%)"
                )
                for k in KS
            ]
            print(
                f"  {target.name:26s} {n:3d} {med('terms'):5g} {med('r2'):6.2f} {100 * med('mape'):6.1f}% "
                f"{med('rho'):8.2f}   " + "  ".join(ranks),
                flush=True,
            )
        print(f"  {'':26s} (of {len(pts):,} configurations)")


# ---- parts 2 and 3: studies, as the tuner runs them ----


def study(
    target: Target,
    strategy: str,
    seed: int,
    noise: float,
    budget: int,
    options: dict | None = None,
    out: Path | None = None,
) -> tuple[Evaluator, tuner.Tuner]:
    """A finished in-memory study (one run per configuration, no interleaved baseline)."""
    sp, obj = target.space, objective.parse(target.objective)
    config = cfg.StudyConfig(
        space=sp.to_json(),
        strategy=strategy,
        strategy_options=dict(options or {}),
        seed=seed,
        app=("bench",),
        objective=cfg.ObjectiveSpec(obj.name, obj.direction, obj.unit),
        repeats=1,
        baseline_every=0,
        confirm_top=1,
        confirm_rounds=1,
        out=str(out) if out else "",
    )
    store = stores.Store.create(
        optuna.storages.InMemoryStorage(), f"{strategy}-{seed}", config, cfg.Budget(budget, None)
    )
    ev = target.evaluator(noise, seed)
    t = tuner.Tuner(store, ev, sp, obj, strategies.make(strategy, sp, seed, options))
    t.run()
    return ev, t


def evaluations_to(ev: Evaluator, goal: float) -> int | None:
    """Runs of the search (training and trials; not the default's, not the confirmation's) until one of a
    configuration within the goal."""
    n = 0
    for label, true in ev.runs:
        if label.startswith("training-") or (label.startswith("t") and label[1:2].isdigit()):
            n += 1
            if true >= goal:
                return n
    return None


def censored(counts: list[int | None], budget: int) -> str:
    reached = [c for c in counts if c is not None]
    missed = len(counts) - len(reached)
    med = statistics.median(reached + [budget + 1] * missed)
    cell = f">{budget}" if med > budget else f"{med:g}"
    return f"{cell} ({missed} missed)" if missed else cell


MODELS = {
    "model (20 + top 20)": {"training": 20, "top_k": 20},
    "model (40 + top 20)": {"training": 40, "top_k": 20},
    "model, refit (40 + 20 a round)": {"training": 40, "top_k": 20, "refit": True},
}


def part2(targets, seeds, noise, budget, rivals) -> None:
    print(
        f"\n2. evaluations (training runs included) until a configuration within 95% of the exhaustive best "
        f"was measured\n   (median of {seeds} seeds; rivals' budget {budget} trials; noise sigma {noise})"
    )
    names = list(MODELS) + list(rivals)
    print(f"  {'target':26s}" + "".join(f"{n:>32s}" for n in names))
    for target in targets:
        _, vals = truths(target)
        goal = 0.95 * float(vals.max())
        row = []
        for name in names:
            opts = MODELS.get(name)
            strategy, cap = (
                ("model", opts["training"] + (budget if opts.get("refit") else opts["top_k"]))
                if opts
                else (name, budget)
            )
            counts = [
                evaluations_to(
                    study(
                        target, strategy, s, noise, budget if opts is None or opts.get("refit") else opts["top_k"], opts
                    )[0],
                    goal,
                )
                for s in range(seeds)
            ]
            row.append(censored(counts, cap))
        print(f"  {target.name:26s}" + "".join(f"{c:>32s}" for c in row), flush=True)


def part3(seeds, noise, budget, rivals) -> None:
    small, large = eq3_target(1024), eq3_target(4096)
    _, vals = truths(large)
    goal = 0.95 * float(vals.max())
    # warm studies: a trial budget above the top k, so the strategy's own stop (which reports how well the saved
    # model predicted) comes before the budget's
    print(
        f"\n3. warm start at a 4x larger problem: eq3 at f = 4096 GiB, evaluations (training included) to 95% of "
        f"its exhaustive best\n   (median of {seeds} seeds); the saved model comes from studies at smaller sizes"
    )
    rows: dict[str, list] = {k: [] for k in ("cold", "warm1", "warm2", *rivals)}
    predicted: dict[str, list] = {"warm1": [], "warm2": []}
    with tempfile.TemporaryDirectory() as tmp:
        for s in range(seeds):
            d = Path(tmp) / str(s)
            for sub in ("1024", "2048", "w1", "w2"):
                (d / sub).mkdir(parents=True)
            rows["cold"].append(
                evaluations_to(study(large, "model", s, noise, 20, {"training": 40, "top_k": 20})[0], goal)
            )
            study(small, "model", s, noise, 20, {"training": 40, "top_k": 20}, out=d / "1024")
            ev, t = study(
                large, "model", s, noise, 21, {"top_k": 20, "warm_start": str(d / "1024" / "model.json")}, out=d / "w1"
            )
            rows["warm1"].append(evaluations_to(ev, goal))
            predicted["warm1"].append(t.strategy.warm_quality)
            study(
                eq3_target(2048),
                "model",
                s,
                noise,
                20,
                {"training": 10, "top_k": 20, "warm_start": str(d / "1024" / "model.json")},
                out=d / "2048",
            )
            ev, t = study(
                large, "model", s, noise, 21, {"top_k": 20, "warm_start": str(d / "2048" / "model.json")}, out=d / "w2"
            )
            rows["warm2"].append(evaluations_to(ev, goal))
            predicted["warm2"].append(t.strategy.warm_quality)
            for rival in rivals:
                rows[rival].append(evaluations_to(study(large, rival, s, noise, budget)[0], goal))
    labels = {
        "cold": ("model, cold: 40 training + top 20", 60),
        "warm1": ("warm start from f = 1024 (40 + 20 runs there): top 20", 20),
        "warm2": ("warm start from f = 1024 and 2048 (40 + 20, 10 + 20): top 20", 20),
        **{rival: (rival, budget) for rival in rivals},
    }
    for key, (label, cap) in labels.items():
        extra = ""
        if key in predicted:
            q = [x for x in predicted[key] if x and x.get("points")]
            if q:
                extra = (
                    f"   its predictions of the first {q[0]['points']} points: MAPE "
                    f"{100 * statistics.median(x['mape'] for x in q):.1f}%, Spearman "
                    f"{statistics.median(x['spearman'] for x in q):.2f}"
                )
        print(f"  {label:62s} {censored(rows[key], cap):>14s}{extra}", flush=True)


# ---- part 4: real runs ----


def to_winner(out: Path, summary: dict) -> tuple[int, float] | None:
    """(runs of the search, training included, until the confirmed winner's first run; tuning time then)."""
    if not (summary["verdict"] and summary["verdict"]["significant"]):
        return None
    with open(out / "trials.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["kind"] in ("training", "trial")]
    runs = 0
    for r in sorted(rows, key=lambda r: int(r["record"])):
        runs += len(json.loads(r["runs"]))
        if r["effective"] == summary["winner"]["signature"]:
            return runs, float(r["tuning_time_s"])
    return None


def part4(seeds: int, training: int, top_k: int) -> None:
    app = [str(native.executable("h5ior")), "-b", "32M", "-t", "1M", "-o", "{scratch}"]
    runs = training + top_k
    print(
        f"\n4. real runs: h5ior -b 32M -t 1M on 2 ranks, /dev/shm, baseline romio_cb_write=enable (one aggregator), "
        f"space romio;\n   model ({training} training + top {top_k}) against ga ({runs} trials), seeds "
        f"{list(range(seeds))} (medians)"
    )
    print(
        f"  {'strategy':28s} {'confirmed gain':>15s} {'runs to the winner':>19s} {'time to the winner':>19s} "
        f"{'study time':>11s}"
    )
    plans = {
        f"model ({training} + top {top_k})": [
            "--strategy",
            "model",
            "--training",
            str(training),
            "--top-k",
            str(top_k),
        ],
        f"ga ({runs} trials)": ["--strategy", "ga", "--trials", str(runs)],
    }
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        baseline = Path(tmp) / "baseline.json"
        baseline.write_text(json.dumps({"version": 1, "mpiio": {"romio_cb_write": "enable"}}))
        for name, args in plans.items():
            gains, firsts, whens, totals = [], [], [], []
            for seed in range(seeds):
                out = Path(tmp) / f"{args[1]}-{seed}"
                r = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "iotuner",
                        "tune",
                        "--baseline",
                        str(baseline),
                        *args,
                        "--seed",
                        str(seed),
                        "--objective",
                        "write-bw",
                        "--space",
                        "romio",
                        "--study",
                        "s",
                        "--out",
                        str(out),
                        "--scratch",
                        scratch,
                        "--",
                        *app,
                    ],
                    capture_output=True,
                    text=True,
                )
                if r.returncode != 0:
                    sys.exit(f"tuning with {name} failed: {r.stderr[-2000:]}")
                summary = json.loads((out / "summary.json").read_text())
                won = to_winner(out, summary)
                gains.append(summary["verdict"]["gain"] if won else 1.0)
                firsts.append(won[0] if won else math.inf)
                whens.append(won[1] if won else math.inf)
                totals.append(summary["tuning_time_s"])
            first, when = statistics.median(firsts), statistics.median(whens)
            print(
                f"  {name:28s} {statistics.median(gains):14.2f}x {first:>19g} {when:>18.0f}s "
                f"{statistics.median(totals):>10.0f}s",
                flush=True,
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10, help="seeds per cell (default 10)")
    ap.add_argument("--noise", type=float, default=0.05, help="log-normal noise sigma of synthetic runs (default 0.05)")
    ap.add_argument("--budget", type=int, default=250, help="trials of the rival strategies (default 250)")
    ap.add_argument(
        "--rivals",
        nargs="*",
        default=list(RIVALS),
        choices=RIVALS,
        help="search strategies to compare with in parts 2 and 3 (default: all)",
    )
    ap.add_argument("--parts", default="1234", help="which parts to run (default 1234)")
    ap.add_argument("--real-seeds", type=int, default=2, help="seeds of part 4's real studies (default 2)")
    ap.add_argument("--targets", nargs="+", choices=("romio", "eq3", "h5evolve"), help="only these targets")
    opts = ap.parse_args()
    targets = {
        "romio": synthetic_target("ufs", "romio"),
        "eq3": eq3_target(1024),
        "h5evolve": synthetic_target("lustre", "h5evolve"),
    }
    chosen = [targets[k] for k in (opts.targets or targets)]
    start = time.time()
    if "1" in opts.parts:
        part1(chosen, opts.seeds, opts.noise)
    if "2" in opts.parts:
        part2(chosen, opts.seeds, opts.noise, opts.budget, opts.rivals)
    if "3" in opts.parts:
        part3(opts.seeds, opts.noise, opts.budget, opts.rivals)
    if "4" in opts.parts:
        part4(opts.real_seeds, 20, 10)
    print(f"\n({time.time() - start:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
