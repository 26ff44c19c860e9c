#!/usr/bin/env python3
"""Search strategies compared side by side.

Each comparison runs, for each strategy and seed, a study the way the tuner
runs it (noisy measurements, deduplication, one run per new configuration)
with a budget of runs, and counts the evaluations (application runs of the
search) until a configuration whose true value is within 95% of the best
known value has been measured. A seed that never got there counts as more
than the budget (a censored median).

Synthetic: the synthetic models; the true value is the model's noise-free
value, the best known value the space's exact optimum.

Replay (on by default; --no-replay skips it): the recorded sweeps of real
targets (bench/data/*-sweep*.json.gz, bench/sweep.py): bandio's (3 runs a point),
h5ior's strided write and read and bandio's jointly acting knobs (48 runs a point each), a strided
collective MPI-IO program's write and read (40 runs a point), where
every point of the space was measured on this machine. A recording with a run report of the default and the machine's
calibration gives the hybrid and auto strategies their model's input, as a
real study would have it. Each run draws one of the
point's recorded runs; a point's true value is the median of its recorded
runs, the best known value the sweep's best median. Medians come with a
bootstrap 95% interval over the seeds, and a Mann-Whitney test tells whether
two strategies' counts differ beyond the noise of the seeds; a sign test
against the exact distribution of uniform sampling without repeats (what
seeds alone give) tells whether a strategy beats blind sampling.

Real (on by default; --no-real skips it): a few short studies of the first
recording's target itself from the same baseline, judged by the sweep's medians, as a
check that the replay behaves like the real runs: the evaluations to 95% of
the sweep's best, and how the values the real runs measured compare with the
ones recorded for the same points.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import optuna
from scipy import stats

from iotuner import settings
from iotuner.tune import (
    objective,
    replay,
    strategies,
    synthetic,
    tuner,
)
from iotuner.tune import (
    space as spaces,
)
from iotuner.tune import (
    store as stores,
)
from iotuner.tune import (
    study_config as cfg,
)
from iotuner.tune.strategies.auto import canonical as canon

REAL_STRATEGIES = ("random", "ga", "bayes")
CASES = (("tunio", "lustre"), ("h5evolve", "lustre"), ("romio", "ufs"))
HERE = Path(__file__).resolve().parent
RECORDINGS = (
    HERE / "data" / "bandio-sweep.json.gz",
    HERE / "data" / "h5ior-strided-sweep-48.json.gz",
    HERE / "data" / "bandio-joint-sweep-48.json.gz",
    HERE / "data" / "strided-sweep-40.json.gz",
)
TARGET = 0.95
SEARCH_RUN = re.compile(r"t\d{4}-|training-")  # run labels of trials and training runs


class Recorder:
    """Wraps an offline evaluator (synthetic or replay); remembers the noise-free value of every search
    run: trials' and training runs' (both are application runs the search paid for), not the baseline's
    or the confirmation's."""

    def __init__(self, inner):
        self.inner, self.objective = inner, inner.objective
        self.notes: list[str] = []
        self.true_values: list[float | None] = []
        self.searched: list[tuple[str, float | None]] = []  # (the run's settings as text, its noise-free value)

    def evaluate(self, doc, label):
        m = self.inner.evaluate(doc, label)
        if SEARCH_RUN.match(label):
            flat = settings.flatten(doc)
            self.true_values.append(self.inner.value(flat))
            self.searched.append((replay.canonical(flat), self.true_values[-1]))
        return m


def evaluations_until(
    sp: spaces.SearchSpace,
    evaluator,
    reached: Callable[[float | None], bool],
    strategy: str,
    seed: int,
    budget: int,
    baseline: dict,
    spec: dict,
) -> int | None:
    """Search runs until one whose noise-free value reached the target; None: not within the budget.
    spec: the study's evaluator field (synthetic= or replay=), as a real study records it."""
    values = search_values(sp, evaluator, strategy, seed, budget, baseline, spec)
    return next((i for i, (_, v) in enumerate(values, start=1) if reached(v)), None)


def search_values(
    sp: spaces.SearchSpace, evaluator, strategy: str, seed: int, budget: int, baseline: dict, spec: dict
) -> list[tuple[str, float | None]]:
    """Every search run of one study, in order: (its settings as text, its noise-free value)."""
    obj = evaluator.objective
    config = cfg.StudyConfig(
        space=sp.to_json(),
        strategy=strategy.partition(":")[0],
        seed=seed,
        baseline=baseline,
        objective=cfg.ObjectiveSpec(obj.name, obj.direction, obj.unit),
        repeats=1,
        baseline_every=0,
        confirm_top=1,
        confirm_rounds=1,
        **spec,
    )
    store = stores.Store.create(
        optuna.storages.InMemoryStorage(), f"{sp.name}-{strategy}-{seed}", config, cfg.Budget(budget, None)
    )
    name, _, options = strategy.partition(":")  # auto:learn=0: a strategy with its options
    opts = dict(o.split("=", 1) for o in options.split(",") if o)
    rec = Recorder(evaluator)
    tuner.Tuner(store, rec, sp, obj, strategies.make(name, sp, seed, opts)).run()
    return rec.searched


def censored(counts: list[int | None], budget: int) -> list[int]:
    return [budget + 1 if c is None else c for c in counts]


def cell(counts: list[int | None], budget: int) -> str:
    missed = sum(c is None for c in counts)
    med = statistics.median(censored(counts, budget))
    text = f">{budget}" if med > budget else f"{med:g}"
    return f"{text} ({missed} missed)" if missed else text


def synthetic_part(opts) -> None:
    print(
        f"synthetic objective: evaluations until a configuration within 95% of the best known value (the "
        f"exact optimum) was measured\n(median over {opts.seeds} seeds; budget {opts.budget} evaluations; "
        f"noise sigma {opts.noise})"
    )
    print(f"  {'space / model':22s}" + "".join(f"{s:>19s}" for s in opts.synthetic_strategies))
    obj = objective.parse("perf")
    for space_name, model_name in CASES:
        sp, mod = spaces.load(space_name), synthetic.model(model_name)
        target = TARGET * mod.best(sp)  # the models give bandwidths: higher is better
        row = []
        for strategy in opts.synthetic_strategies:
            counts = [
                evaluations_until(
                    sp,
                    synthetic.SyntheticEvaluator(mod, obj, opts.noise, 0.0, seed),
                    lambda v: v >= target,  # noqa: B023 - used inside this iteration
                    strategy,
                    seed,
                    opts.budget,
                    {"version": 1},
                    {"synthetic": cfg.SyntheticSpec(model_name, opts.noise)},
                )
                for seed in range(opts.seeds)
            ]
            row.append(cell(counts, opts.budget))
        print(f"  {space_name + ' / ' + model_name:22s}" + "".join(f"{c:>19s}" for c in row), flush=True)


# ---- the recorded target


class Target:
    """The recorded sweep as a yardstick: a point's true value is the median of its recorded runs;
    a run reaches the target when its point is within 95% of the best median (gain over it >= 0.95)."""

    def __init__(self, path: Path, obj: objective.Objective, share: float = TARGET):
        self.rec, self.obj, self.share = replay.load(path), obj, share
        self.judge = replay.ReplayEvaluator(self.rec, obj)  # its value(): a point's median
        medians = [self.rec.median(p, obj) for p in self.rec.points if p.runs]
        self.best = max(medians, key=obj.key)
        self.reaching = sum(1 for m in medians if self.reached(m))

    def reached(self, value: float | None) -> bool:
        return value is not None and self.obj.gain(value, self.best) >= self.share

    def groups(self) -> tuple[dict[str, float], float, int]:
        """The recorded points the model counts as one (auto's canonical form: a knob that cannot act given the
        others), where their recorded runs cannot be told apart either (Kruskal-Wallis p >= 0.05): each
        member's value the median of the group's runs together, so the best of many noisy medians of one
        behaviour is not the yardstick. ({point's settings as text: its group's median}, the best group's
        median, groups pooled)."""
        rec, obj = self.rec, self.obj
        base = settings.flatten(rec.baseline)
        classes: dict[tuple, list] = {}
        for p in rec.points:
            if p.runs:
                labels = {d.name: d.label(v) for d, v in zip(rec.space.dimensions, p.values)}
                key = canon.key(rec.space, canon.canonical(rec.space, labels, base, rec.nodes))
                classes.setdefault(key, []).append(p)
        values, pooled = {}, 0
        for members in classes.values():
            runs = [[rec.value(r, obj) for r in p.runs] for p in members]
            same = len(members) > 1 and stats.kruskal(*runs).pvalue >= 0.05
            pooled += same
            for p, own in zip(members, runs):
                values[replay.canonical(rec.flat_of(p))] = statistics.median(
                    [v for r in runs for v in r] if same else own
                )
        return values, max(values.values(), key=obj.key), pooled

    def split_half(self) -> tuple[int, int, int]:
        """Whether the recording resolves the target: the points within the share of the best by the
        medians of their odd runs, by those of their even runs, and by both (points of 2 runs or more)."""
        pts = [p for p in self.rec.points if len(p.runs) >= 2]
        halves = []
        for h in (0, 1):
            meds = [statistics.median(self.rec.value(r, self.obj) for r in p.runs[h::2]) for p in pts]
            best = max(meds, key=self.obj.key)
            halves.append({i for i, m in enumerate(meds) if self.obj.gain(m, best) >= self.share})
        return len(halves[0]), len(halves[1]), len(halves[0] & halves[1])


def bootstrap_median(counts: list[int], rng, n: int = 10000) -> tuple[float, float]:
    arr = np.array(counts, dtype=float)
    meds = np.median(rng.choice(arr, size=(n, len(arr))), axis=1)
    return float(np.percentile(meds, 2.5)), float(np.percentile(meds, 97.5))


class QuietReplay(replay.ReplayEvaluator):
    """Every run of a point answers the median of its recorded runs: the recorded landscape without the
    noise of the machine it was recorded on, to tell the landscape's difficulty from the noise's."""

    def answer(self, flat, rng):
        m = super().answer(flat, rng)
        return dataclasses.replace(m, value=self.value(flat)) if m.ok else m


def recorded_objective(path: Path, given: str | None) -> objective.Objective:
    """The objective a recording is judged by: the one given, else the one its sweep refined by."""
    return objective.parse(given or replay.load(path).meta.get("schedule", {}).get("objective") or "io-time")


def replay_part(opts, path: Path) -> dict[str, list[int | None]]:
    obj = recorded_objective(path, opts.objective)
    tgt = Target(path, obj, opts.target)
    pct = f"{opts.target:.0%}"
    rec = tgt.rec
    print(
        f"\nreplay of the recorded sweep {path.name}: space {rec.space.name} ({len(rec.points)} points, "
        f"{sum(len(p.runs) for p in rec.points)} recorded runs), objective {obj.name}; "
        f"{tgt.reaching} points within {pct} of the best median; "
        + (
            "a run report of the default and the machine's calibration recorded (the hybrid model's input)"
            if rec.report and rec.calibration
            else "no run report of the default recorded"
        )
    )
    odd, even, both = tgt.split_half()
    print(
        f"  split half: {odd} points within {pct} of the best by the medians of their odd runs, {even} by their "
        f"even runs, {both} by both"
        + ("; the recorded runs do not resolve which points reach the target" if both < min(odd, even) / 2 else "")
    )
    print(
        "  each run answers "
        + (
            "the point's recorded median (noise removed)"
            if opts.replay_noise == "none"
            else "one of the point's recorded runs, drawn at random (the recorded noise)"
        )
    )
    print(
        f"  evaluations until a point whose recorded median is within {pct} of the sweep's best was measured "
        f"(median over {opts.replay_seeds} seeds, budget {opts.replay_budget}; bootstrap 95% interval of the "
        f"median)"
    )
    results: dict[str, list[int | None]] = {}
    curves: dict[str, list[list[float | None]]] = {}
    start = time.time()
    for strategy in opts.strategies:
        t0 = time.time()
        counts, curves[strategy] = [], []
        for seed in range(opts.replay_seeds):
            ev = (QuietReplay if opts.replay_noise == "none" else replay.ReplayEvaluator)(rec, obj, seed)
            values = search_values(
                rec.space,
                ev,
                strategy,
                seed,
                opts.replay_budget,
                rec.baseline,
                {"replay": cfg.ReplaySpec(str(rec.path), rec.sha256)},
            )
            counts.append(next((i for i, (_, v) in enumerate(values, start=1) if tgt.reached(v)), None))
            curves[strategy].append(values)
        results[strategy] = counts
        lo, hi = bootstrap_median(censored(counts, opts.replay_budget), np.random.default_rng(0))
        print(
            f"  {strategy:12s} {cell(counts, opts.replay_budget):>16s}   [{lo:g}, {hi:g}]   "
            f"({time.time() - t0:.0f}s)   seeds: {' '.join('-' if c is None else str(c) for c in counts)}",
            flush=True,
        )
    names = list(results)
    print("  Mann-Whitney U, two-sided p-values of the counts (censored at the budget), strategy pairs:")
    print("  " + " " * 12 + "".join(f"{n:>13s}" for n in names[1:]))
    for i, a in enumerate(names[:-1]):
        row = []
        for j, b in enumerate(names[1:], start=1):
            if j <= i:
                row.append("")
                continue
            p = stats.mannwhitneyu(
                censored(results[a], opts.replay_budget),
                censored(results[b], opts.replay_budget),
                alternative="two-sided",
            ).pvalue
            row.append(f"{p:.2g}")
        print(f"  {a:12s}" + "".join(f"{c:>13s}" for c in row))
    uniform_against(results, len(rec.points), tgt.reaching)
    if opts.curve:
        best_so_far(tgt, curves, opts.curve)
    print(f"  ({time.time() - start:.0f}s)")
    return results


def best_so_far(tgt: Target, curves: dict[str, list[list[tuple[str, float | None]]]], runs: int) -> None:
    """Per run count, the median over seeds of the best point measured so far, as a share of the best: by the
    points' own medians (the sweep's best one), and by their groups' (Target.groups)."""
    grouped, group_best, pooled = tgt.groups()
    for title, value_of, best in (
        ("the sweep's best median (each point by its own runs)", None, tgt.best),
        (
            f"the best group ({pooled} groups of points the model counts as one and the recording cannot tell "
            "apart, each by its runs together)",
            grouped,
            group_best,
        ),
    ):
        print(f"  best-so-far as a share of {title}: median over seeds (lowest seed)")
        print("  " + f"{'runs':12s}" + "".join(f"{n:>14d}" for n in range(1, runs + 1)))
        for name, seeds in curves.items():
            cells = []
            for n in range(1, runs + 1):
                shares = []
                for flats in seeds:
                    vals = [value_of.get(f, v) if value_of is not None else v for f, v in flats[:n] if v is not None]
                    shares.append(max((tgt.obj.gain(v, best) for v in vals), default=0.0))
                cells.append(f"{statistics.median(shares):.3f} ({min(shares):.2f})")
            print(f"  {name:12s}" + "".join(f"{c:>14s}" for c in cells))


def uniform_within(t: int, points: int, good: int) -> float:
    """P(uniform sampling without repeats measures one of `good` points of `points` within t evaluations)."""
    miss = 1.0
    for i in range(t):
        miss *= (points - good - i) / (points - i)
    return 1 - miss


def uniform_against(results: dict[str, list[int | None]], points: int, good: int) -> None:
    """The seeds' own noise as the yardstick: a strategy no better than uniform sampling reaches the target
    within the uniform median in half its seeds (a sign test against that exact distribution)."""
    if not good:
        return
    med = next(t for t in range(1, points + 1) if uniform_within(t, points, good) >= 0.5)
    share = uniform_within(med, points, good)
    print(
        f"  against uniform sampling without repeats (median {med} evaluations for {good} target points of "
        f"{points}): seeds within {med}, and the two-sided binomial p against uniform sampling"
    )
    for name, counts in results.items():
        k = sum(1 for c in counts if c is not None and c <= med)
        p = stats.binomtest(k, len(counts), share).pvalue
        print(f"  {name:12s} {k:3d}/{len(counts)}   p = {p:.2g}")


def real_part(opts, replayed: dict[str, list[int | None]] | None) -> None:
    path = opts.recording[0]
    obj = recorded_objective(path, opts.objective)
    tgt = Target(path, obj)
    rec = tgt.rec
    app = rec.runnable_command()
    print(
        f"\nreal runs of the target: {' '.join(rec.command)} "
        f"on {opts.real_scratch}, space {rec.space.name}, baseline of the recording, {opts.real_trials} trials, "
        f"seeds {list(range(opts.real_seeds))}"
    )
    print(
        f"  {'strategy':12s} {'evaluations to 95%':>19s} {'replay, same budget':>20s} {'confirmed gain':>15s} "
        f"{'tuning time':>12s}"
    )
    ratios, inside = [], []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir=opts.real_scratch) as scratch:
        baseline = Path(tmp) / "baseline.json"
        baseline.write_text(json.dumps(rec.baseline))
        for strategy in opts.real_strategies:
            counts, gains, times = [], [], []
            for seed in range(opts.real_seeds):
                out = Path(tmp) / f"{strategy}-{seed}"
                r = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "iotuner",
                        "tune",
                        "--baseline",
                        str(baseline),
                        "--space",
                        rec.space.name,
                        "--trials",
                        str(opts.real_trials),
                        "--strategy",
                        strategy,
                        "--seed",
                        str(seed),
                        "--objective",
                        obj.name,
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
                    sys.exit(f"tuning with {strategy} failed: {r.stderr[-2000:]}")
                summary = json.loads((out / "summary.json").read_text())
                significant = bool(summary["verdict"] and summary["verdict"]["significant"])
                gains.append(summary["verdict"]["gain"] if significant else 1.0)
                times.append(summary["tuning_time_s"])
                n = 0
                reached = None
                for row in csv.DictReader((out / "trials.csv").open()):
                    if row["kind"] != "trial" or not row["runs"]:
                        continue
                    runs = json.loads(row["runs"])
                    n += len(runs)
                    flat = {
                        **settings.flatten(rec.baseline),
                        **settings.flatten(settings.from_flat(json.loads(row["settings"]))),
                    }
                    point = rec.find(flat)
                    if point.runs and runs:
                        recorded = [rec.value(x, obj) for x in point.runs]
                        ratios.append(statistics.median(runs) / statistics.median(recorded))
                        inside.extend(min(recorded) <= v <= max(recorded) for v in runs)
                    if reached is None and tgt.reached(tgt.judge.value(flat)):
                        reached = n
                counts.append(reached)
            predicted = "-"
            if replayed and strategy in replayed:
                within = [c for c in replayed[strategy] if c is not None and c <= opts.real_trials]
                predicted = f"{len(within)}/{len(replayed[strategy])} seeds reach"
            print(
                f"  {strategy:12s} {cell(counts, opts.real_trials):>19s} {predicted:>20s} "
                f"{statistics.median(gains):14.2f}x {statistics.median(times):11.0f}s",
                flush=True,
            )
    if ratios:
        print(
            f"  the real runs against the recording, same points: median real / recorded median "
            f"{statistics.median(ratios):.2f} (quartiles {np.percentile(ratios, 25):.2f}-"
            f"{np.percentile(ratios, 75):.2f}, {len(ratios)} points); {sum(inside) / len(inside):.0%} of the "
            f"{len(inside)} real runs fall within the recorded range of their point"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10, help="seeds per strategy, synthetic (default 10)")
    ap.add_argument("--budget", type=int, default=250, help="evaluations per synthetic study (default 250)")
    ap.add_argument("--noise", type=float, default=0.05, help="synthetic noise sigma (default 0.05)")
    ap.add_argument(
        "--synthetic-strategies",
        nargs="+",
        default=None,
        help="strategies on the synthetic models (default: every registered one but grid, which "
        "would enumerate spaces of 10^5 points)",
    )
    ap.add_argument("--no-synthetic", dest="synthetic", action="store_false", help="skip the synthetic models")
    ap.add_argument(
        "--strategies",
        nargs="+",
        default=None,
        help="strategies on the replay, each NAME or NAME:OPTION=V,... (auto:learn=0) (default: every registered one)",
    )
    ap.add_argument(
        "--recording",
        type=Path,
        nargs="+",
        default=list(RECORDINGS),
        help="the recorded sweeps (default: %(default)s); the real runs use the first",
    )
    ap.add_argument("--objective", help="objective on the recordings (default: the one each sweep refined by)")
    ap.add_argument("--no-replay", dest="replay", action="store_false", help="skip the replay comparison")
    ap.add_argument("--replay-seeds", type=int, default=20, help="seeds per strategy on the replay (default 20)")
    ap.add_argument(
        "--replay-noise",
        choices=("recorded", "none"),
        default="recorded",
        help="recorded: a run draws one of the point's recorded runs (default); none: it answers the "
        "point's median, the landscape without the noise",
    )
    ap.add_argument(
        "--target",
        type=float,
        default=TARGET,
        metavar="SHARE",
        help="on the replay: the share of the sweep's best a point must reach (default %(default)s)",
    )
    ap.add_argument("--replay-budget", type=int, default=200, help="evaluations per replay study (default 200)")
    ap.add_argument(
        "--curve",
        type=int,
        default=10,
        metavar="N",
        help="on the replay: the best-so-far table for the first N runs (default 10; 0: none)",
    )
    ap.add_argument(
        "--no-real",
        dest="real",
        action="store_false",
        help="skip the real runs of the target (a few minutes on 2 cores)",
    )
    ap.add_argument("--real-strategies", nargs="+", default=list(REAL_STRATEGIES))
    ap.add_argument("--real-trials", type=int, default=40)
    ap.add_argument("--real-seeds", type=int, default=2)
    ap.add_argument("--real-scratch", default="/dev/shm", help="where the real runs write (default /dev/shm)")
    opts = ap.parse_args()
    opts.strategies = opts.strategies or strategies.names()
    opts.synthetic_strategies = opts.synthetic_strategies or [n for n in strategies.names() if n != "grid"]
    if opts.seeds < 10 or opts.replay_seeds < 10:
        print("note: fewer than 10 seeds gives a rough median", file=sys.stderr)
    print(f"bench/strategies.py {' '.join(shlex.quote(a) for a in sys.argv[1:])}")
    start = time.time()
    if opts.synthetic:
        synthetic_part(opts)
    replayed = None
    if opts.replay:
        for i, path in enumerate(opts.recording):
            got = replay_part(opts, path)
            replayed = got if i == 0 else replayed
    if opts.real:
        real_part(opts, replayed)
    print(f"\n({time.time() - start:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
