#!/usr/bin/env python3
"""TunIO's impact-first search and early stopping at our scale (paper 002, Figs. 9 and 10b).

Targets with a known truth: the synthetic models (every configuration's
noise-free value is known), and recorded real sweeps (`--recording FILE`, an
exhaustive sweep of a real kernel written by bench/sweep.py: a run of a point
draws one of its recorded runs, its truth is the median of them). Each run of
the application costs one unit of tuning time (a production run is as long as
a tuning run).

1. Impact-first search (Fig. 9): for each strategy and seed, a study of
   --generations generations of 8 trials; the iteration (generation) and the
   evaluation at which a configuration within 95% of the best (the exact
   optimum, or the recording's best median) was first measured. `ga` is
   TunIO's GA without subsets, `tunio` with the learned picker, `tunio-fanova`
   with the fANOVA ranking (the non-learned ablation).
2. Early stopping (Fig. 10b): on the same studies of `tunio`, every stopper is
   applied to the study's iterations as the live rule would see them (the
   stoppers do not change what is proposed, so a live run stops where this
   says); the stop iteration, the return on tuning investment at the stop (the
   true gain of the configuration kept, over the tuning time and the
   confirmation round) as a share of the best return in hindsight, the tuning
   time saved against the whole budget, the share of the budget's final gain
   kept, and for the production-runs stopper the lifecycle time (tuning plus
   N production runs) over the best lifecycle in hindsight.

    bench/tunio.py --cases ufs lustre          # synthetic
    bench/tunio.py --recording bench/data/bandio-sweep.json.gz --cases recording
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import optuna

from iotuner import settings
from iotuner.tune import (
    objective as objectives,
)
from iotuner.tune import (
    space as spaces,
)
from iotuner.tune import (
    stoppers,
    strategies,
    synthetic,
    tuner,
)
from iotuner.tune import (
    store as stores,
)
from iotuner.tune import (
    study_config as cfg,
)
from iotuner.tune import (
    trajectory as traj,
)
from iotuner.tune.strategies.tunio import stopper as learned_stopper

POPULATION = 8
CONFIRMATION_RUNS = 16  # a confirmation round of 3 candidates and the default, 4 rounds
PAPER_FIG9 = "6 against 43 iterations (FLASH, 2.3 GB/s)"
PAPER_FIG10B = {"learned": 90.5, "max-performance": 86.1, "heuristic": 59.3, "fixed": 77.9}


@dataclass
class Target:
    name: str
    space: spaces.SearchSpace
    baseline: dict
    evaluator: Callable[[int], object]  # seed -> evaluator
    true: Callable[[dict], float]  # flat settings of a run -> its noise-free value
    optimum: float


def synthetic_target(space_name: str, model_name: str, noise: float) -> Target:
    sp, m = spaces.load(space_name), synthetic.model(model_name)
    obj = objectives.parse("perf")
    return Target(
        f"{space_name} / {model_name}",
        sp,
        {"version": 1},
        lambda seed: synthetic.SyntheticEvaluator(m, obj, noise, 0.0, seed),
        m.value,
        m.best(sp),
    )


def replay_target(path: str) -> Target:
    from iotuner.tune import replay  # the replay objective (bench/sweep.py's recordings)

    rec = replay.load(path)
    obj = objectives.parse("perf")
    medians = [rec.median(p, obj) for p in rec.measured()]
    return Target(
        f"recording {Path(path).name}",
        rec.space,
        rec.baseline,
        lambda seed: replay.ReplayEvaluator(rec, obj, seed),
        lambda flat: rec.median(rec.find(flat), obj) or 0.0,
        max(m for m in medians if m is not None),
    )


class Clocked:
    """Every run is one unit of tuning time; remembers each search run's true value."""

    def __init__(self, inner, true: Callable[[dict], float]):
        self.inner, self.objective, self.true = inner, inner.objective, true
        self.t = 1_000_000.0
        self.search: list[float] = []

    def now(self) -> float:
        return self.t

    def evaluate(self, doc, label):
        self.t += 1.0
        m = self.inner.evaluate(doc, label)
        if label.startswith("t"):
            self.search.append(self.true(settings.flatten(doc)))
        return m


@dataclass
class Study:
    iterations: list[traj.Iteration]  # as the stoppers see them
    truth: list[float]  # the true value of the configuration kept after each iteration
    default: float
    reached: tuple[int, int] | None  # (iteration, evaluation) of the first run within 95% of the optimum


def run(target: Target, strategy: str, seed: int, generations: int, stop_at_target: bool = False) -> Study:
    obj = objectives.parse("perf")
    config = cfg.StudyConfig(
        space=target.space.to_json(),
        strategy=strategy,
        seed=seed,
        baseline=target.baseline,
        objective=cfg.ObjectiveSpec(obj.name, obj.direction, obj.unit),
        synthetic=cfg.SyntheticSpec(target.name),
        confirm_top=1,
        confirm_rounds=1,
        stop="none",
    )
    store = stores.Store.create(
        optuna.storages.InMemoryStorage(), f"{strategy}-{seed}", config, cfg.Budget(None, None), heartbeat_s=None
    )
    ev = Clocked(target.evaluator(seed), lambda flat: target.true(flat))
    store.now = ev.now
    goal = 0.95 * target.optimum

    class Iterations:  # exactly `generations` iterations, re-proposed points included (as in a generation)
        name = "iterations"

        def check(self, state):
            return "budget" if len(state.store.trials.search_trials()) >= generations * POPULATION else None

    class Reached:
        name = "reached"

        def check(self, state):
            return "reached" if ev.search and max(ev.search) >= goal else None

    rules = [Iterations(), *([Reached()] if stop_at_target else []), *stops_default()]
    t = tuner.Tuner(store, ev, target.space, obj, strategies.make(strategy, target.space, seed), rules=rules)
    t.run()
    first = next((i for i, v in enumerate(ev.search) if v >= goal), None)
    reached = None
    if first is not None:  # the search trial that ran it (re-proposed points cost no run)
        runs = 0
        for index, r in enumerate(store.trials.search_trials()):
            runs += r.cost_runs
            if runs > first:
                reached = (index // POPULATION + 1, first + 1)
                break
    its = traj.iterations(store.results.trajectory, POPULATION, obj)
    return Study(its, kept_truth(store, its, target, obj), target.true(settings.flatten(target.baseline)), reached)


def stops_default():
    from iotuner.tune import stop

    return stop.default_rules()


def kept_truth(store, its, target: Target, obj) -> list[float]:
    """The true value of the configuration a user would keep after each iteration: the best configuration by
    its median as it stood then, or the default."""
    ends = {it.at_s for it in its}
    at = {p.record: p.at_s for p in store.results.trajectory}
    records = sorted((r for r in store.trials.records() if r.id in at), key=lambda r: (at[r.id], r.id))
    pools: dict[str, list[float]] = {}
    first: dict[str, dict] = {}
    default_runs: list[float] = []
    default_true = target.true(settings.flatten(target.baseline))
    out: dict[float, float] = {}
    for r in records:
        if r.ok and (r.kind == stores.BASELINE or r.duplicate_of == stores.DEFAULT):
            default_runs.extend(r.runs)
        elif r.kind == stores.TRIAL and r.ok and r.signature is not None:
            pools.setdefault(r.signature, []).extend(r.runs)
            first.setdefault(r.signature, r.settings)
        if at[r.id] in ends and default_runs:
            default = statistics.median(default_runs)
            best = max(pools, key=lambda k: statistics.median(pools[k]), default=None)
            keep = best is not None and obj.better(statistics.median(pools[best]), default)
            out[at[r.id]] = target.true({**settings.flatten(target.baseline), **first[best]}) if keep else default_true
    return [out.get(it.at_s, default_true) for it in its]


# ---- part 1 ----


def part1(targets: list[Target], opts) -> None:
    print(
        f"\n1. impact-first search (Fig. 9; paper: {PAPER_FIG9})\n   iterations (generations of {POPULATION}) "
        f"and evaluations until a configuration within 95% of the best was measured; median of {opts.seeds} "
        f"seeds, budget {opts.generations} generations"
    )
    print(f"   {'target':34s}" + "".join(f"{s:>24s}" for s in opts.strategies))
    for target in targets:
        cells = []
        for strategy in opts.strategies:
            found = [run(target, strategy, seed, opts.generations, stop_at_target=True).reached for seed in seeds(opts)]
            missed = sum(1 for f in found if f is None)
            big = (opts.generations + 1, opts.generations * POPULATION + 1)
            its = statistics.median([f[0] if f else big[0] for f in found])
            evals = statistics.median([f[1] if f else big[1] for f in found])
            cell = f"{_cell(its, big[0])} it / {_cell(evals, big[1])} ev"
            cells.append(cell + (f" ({missed} missed)" if missed else ""))
            if opts.raw:
                print(f"   raw {target.name} {strategy}: {found}", flush=True)
        print(f"   {target.name:34s}" + "".join(f"{c:>24s}" for c in cells), flush=True)


def seeds(opts) -> range:
    return range(opts.first_seed, opts.first_seed + opts.seeds)


def _cell(x: float, censored: float) -> str:
    return f">{censored - 1:g}" if x >= censored else f"{x:g}"


# ---- part 2 ----


def roti(study: Study, k: int) -> float:
    return (study.truth[k] - study.default) / (
        study.iterations[k].at_s - study.iterations[0].at_s + 1 + CONFIRMATION_RUNS
    )


def stop_iteration(study: Study, decide) -> int:
    its = study.iterations
    for k in range(1, len(its)):
        if decide(its[: k + 1]):
            return k
    return len(its) - 1


def part2(targets: list[Target], opts) -> None:
    obj = objectives.parse("perf")
    policy = learned_stopper.load_policy()
    prod = traj.Production(1.0, 1.0, "one run")
    rules = {
        "learned": lambda its: learned_stopper.learned(its, obj, policy),
        "heuristic": lambda its: stoppers.heuristic(its, obj),
    }
    for n in opts.production_runs:
        rules[f"production-runs {n}"] = (lambda n: lambda its: stoppers.production_runs(its, obj, n, prod))(n)  # noqa: B023 - n is bound by the outer lambda
    print(
        f"\n2. early stopping (Fig. 10b; paper, RoTI as a share of the perfect one: learned 90.5%, "
        f"maximize-performance 86.1%, heuristic 59.3%, fixed 50 iterations 77.9%)\n   strategy "
        f"{opts.stop_strategy}, {opts.generations} generations, {opts.seeds} seeds; RoTI counts the "
        f"confirmation round ({CONFIRMATION_RUNS} runs); stop iteration: median; the rest: means"
    )
    for target in targets:
        studies = [run(target, opts.stop_strategy, seed, opts.generations) for seed in seeds(opts)]
        studies = [s for s in studies if len(s.iterations) > 1]
        print(
            f"\n   {target.name}: final gain {statistics.median(s.truth[-1] / s.default for s in studies):.2f}x "
            f"(median); best RoTI in hindsight at iteration "
            f"{statistics.median(max(range(1, len(s.truth)), key=lambda k: roti(s, k)) for s in studies):g}"
        )
        print(
            f"   {'stopper':22s} {'stop iteration':>15s} {'RoTI % of perfect':>18s} {'(paper)':>8s} "
            f"{'time saved':>11s} {'gain kept':>10s} {'lifecycle / best':>17s}"
        )
        table = {name: [stop_iteration(s, decide) for s in studies] for name, decide in rules.items()}
        table["max-performance"] = [
            next(k for k in range(1, len(s.truth)) if s.truth[k] >= s.truth[-1] - 1e-9)
            if s.truth[-1] > s.default
            else 1
            for s in studies
        ]
        table[f"fixed {opts.generations}"] = [len(s.iterations) - 1 for s in studies]
        for name, ks in table.items():
            shares, saved, kept, life = [], [], [], []
            for s, k in zip(studies, ks):
                best = max(roti(s, j) for j in range(1, len(s.truth)))
                shares.append(roti(s, k) / best if best > 0 else 1.0)
                end = s.iterations[-1].at_s - s.iterations[0].at_s + 1 + CONFIRMATION_RUNS
                saved.append(1 - (s.iterations[k].at_s - s.iterations[0].at_s + 1 + CONFIRMATION_RUNS) / end)
                gain = s.truth[-1] - s.default
                kept.append((s.truth[k] - s.default) / gain if gain > 0 else 1.0)
                if name.startswith("production-runs"):
                    n = int(name.split()[-1])
                    cost = [
                        s.iterations[j].at_s - s.iterations[0].at_s + 1 + CONFIRMATION_RUNS + n * s.default / s.truth[j]
                        for j in range(1, len(s.truth))
                    ]
                    life.append(cost[k - 1] / min(cost))
            paper = PAPER_FIG10B.get(name.split()[0])
            print(
                f"   {name:22s} {statistics.median(ks):15g} {100 * np.mean(shares):17.1f}% "
                f"{(f'{paper:.1f}%' if paper else '-'):>8s} {100 * np.mean(saved):10.1f}% {100 * np.mean(kept):9.1f}% "
                f"{(f'{np.mean(life):.3f}' if life else '-'):>17s}",
                flush=True,
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--cases",
        nargs="+",
        default=["ufs", "lustre"],
        help="ufs (romio space, ufs model), lustre (tunio space, lustre model), recording",
    )
    ap.add_argument("--recording", help="an exhaustive recorded sweep (bench/sweep.py) for the case 'recording'")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    ap.add_argument("--generations", type=int, default=50)
    ap.add_argument("--noise", type=float, default=0.05, help="synthetic noise sigma")
    ap.add_argument("--strategies", nargs="+", default=["ga", "tunio", "tunio-fanova"])
    ap.add_argument("--stop-strategy", default="tunio")
    ap.add_argument("--production-runs", nargs="+", type=int, default=[100, 1000, 10000])
    ap.add_argument("--parts", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--raw", action="store_true", help="print every seed's (iteration, evaluation)")
    opts = ap.parse_args()
    targets = []
    for case in opts.cases:
        if case == "ufs":
            targets.append(synthetic_target("romio", "ufs", opts.noise))
        elif case == "lustre":
            targets.append(synthetic_target("tunio", "lustre", opts.noise))
        elif case == "recording":
            if not opts.recording:
                ap.error("the case 'recording' needs --recording FILE")
            targets.append(replay_target(opts.recording))
        else:
            ap.error(f"unknown case {case}")
    start = time.time()
    if 1 in opts.parts:
        part1(targets, opts)
    if 2 in opts.parts:
        part2(targets, opts)
    print(f"\n({time.time() - start:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
