#!/usr/bin/env python3
"""The hybrid model against black-box ML and random search, after Isaila et al. (Cluster'15) Fig. 8-11.

Instances: bytes per rank (11 values, 64 KiB to 64 MiB) x 1 and 2 ranks, written then read back on /dev/shm
(tests/programs/two_phase.c), in one of two patterns (--pattern):
  contiguous  IOR-like: each rank's bytes as one region, in 1 MiB collective calls (one call below that);
  strided     16 KiB blocks interleaved across the ranks (block i of rank r at (i x ranks + r) x 16 KiB), through
              a file view, 64 blocks per collective call: the pattern two-phase I/O and data sieving exist for;
  sparse      as strided, with a 16 KiB hole after every row of blocks: writes read-modify-write.
Configurations: romio_cb_write = romio_cb_read in {automatic, enable, disable} x cb_nodes {1, 2} (with
cb_config_list *:2) x cb_buffer_size {256 KiB, 1, 4, 16 MiB}: 24. Every configuration of every instance is
measured once (the ground truth; write and read phase times from the run report); the default is ROMIO's own
(automatic, one aggregator, 16 MiB). Each method picks per instance a budget of k = 3 configurations and keeps
the best measured one; the speedup is the default's time over the picked one's.

  rs      3 configurations drawn at random
  ml      SVR-RBF (tuned by 5-fold CV) on log time, trained on 3 configurations per instance of a balanced
          fraction (66 points over the 22 instances, the paper's 3 of 9 per instance), features bytes per rank,
          ranks and the configuration; its top 3 per instance
  hybrid  the configuration's operations counted from the default run's access pattern (its run report), priced
          by this machine's calibration (`iotuner calibrate`, run first); its top 3 distinct predictions

Ten repetitions (rs: new draws; ml: a new design; both with new noise). Noise: multiplicative log-normal,
t x exp(N(0, sigma^2)), on the training data only: ml's training times, hybrid's calibration measurements (its
surrogates refitted with the learners and parameters chosen on clean data). The ground truth is never noisy.
Timed parts run under the shared timing lock, one instance at a time.
"""

from __future__ import annotations

import argparse
import fcntl
import itertools
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from iotuner import native, runner
from iotuner.perfmodel import calibration, predict

LOCK = "/tmp/iotuner-timing.lock"
KIB, MIB = 1024, 1024 * 1024
SIZES = [64 * KIB * 2**i for i in range(11)]  # 64 KiB .. 64 MiB
RANKS = (1, 2)
MODES = ("automatic", "enable", "disable")
NODES = (1, 2)
BUFFERS = (256 * KIB, MIB, 4 * MIB, 16 * MIB)
DEFAULT = ("automatic", 1, 16 * MIB)
SIGMAS = (0.0, 0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0)
K = 3
STRIDED_BLOCK = 16 * KIB


class Locked:
    def __enter__(self):
        self.f = open(LOCK, "w")
        fcntl.flock(self.f, fcntl.LOCK_EX)

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def configs():
    return list(itertools.product(MODES, NODES, BUFFERS))


def hints_of(cfg) -> dict:
    mode, nodes, buf = cfg
    return {
        "romio_cb_write": mode,
        "romio_cb_read": mode,
        "cb_nodes": str(nodes),
        "cb_config_list": "*:2",
        "cb_buffer_size": str(buf),
    }


def layout(size: int, pattern: str) -> tuple[int, int, int]:
    """(block, count, blocks per call) of one rank's bytes."""
    if pattern in ("strided", "sparse"):
        count = size // STRIDED_BLOCK
        return STRIDED_BLOCK, count, min(count, MIB // STRIDED_BLOCK)
    block = min(size, MIB)
    return block, size // block, 1


def run_instance(size: int, ranks: int, pattern: str, scratch: Path, out: Path) -> dict:
    """Every configuration of one instance, measured once: {config: (write s, read s)}, and the default's report."""
    exe = native.executable("bench_two_phase")
    block, count, per_call = layout(size, pattern)
    result, default_report = {}, None
    with Locked():
        for cfg in configs():
            doc = out / "settings.json"
            doc.write_text(json.dumps({"version": 1, "mpiio": hints_of(cfg)}))
            data = scratch / "data.bin"
            data.unlink(missing_ok=True)
            rep_path = out / "report.json"
            res = runner.run(
                [
                    "mpiexec.mpich",
                    "-n",
                    str(ranks),
                    str(exe),
                    str(data),
                    str(block),
                    str(count),
                    pattern,
                    "both",
                    str(per_call),
                ],
                config=doc,
                report=rep_path,
                capture=True,
                timeout=300,
            )
            if not res.ok:
                raise SystemExit(f"bench/hybrid: run failed ({cfg}): {res.stderr[-500:]}")
            phases = res.report.data_phases()
            w = next(p for p in phases if p["bytes_written"])
            r = next(p for p in phases if p["bytes_read"])
            result[cfg] = (w["wall_time_s"], r["wall_time_s"])
            if cfg == DEFAULT:
                default_report = json.loads(rep_path.read_text())
    data.unlink(missing_ok=True)
    return {"times": result, "report": default_report}


def speedups(truth, picks):
    """default time / best measured time of the picked configurations, per instance."""
    return [truth[i][DEFAULT] / min(truth[i][c] for c in picks[i]) for i in range(len(truth))]


def pick_rs(truth, rng):
    return [rng.sample(configs(), K) for _ in truth]


def encode(size, ranks, cfg):
    mode, nodes, buf = cfg
    return [math.log2(size), ranks, *[1.0 if mode == m else 0.0 for m in MODES], nodes, math.log2(buf)]


def pick_ml(truth, instances, rng, sigma, per_instance=3):
    from iotuner.tune.strategies.hybrid.fraction import balanced_fraction
    from iotuner.tune.strategies.hybrid.ml import fit_svr

    X, y = [], []
    for i, (size, ranks) in enumerate(instances):
        rows = balanced_fraction(
            [list(MODES), [str(n) for n in NODES], [str(b) for b in BUFFERS]], per_instance, rng.randrange(1 << 30)
        )
        for mode, nodes, buf in rows:
            cfg = (mode, int(nodes), int(buf))
            X.append(encode(size, ranks, cfg))
            y.append(math.log(truth[i][cfg]) + (rng.gauss(0, sigma) if sigma else 0.0))
    model = fit_svr(X, y)
    picks = []
    for size, ranks in instances:
        cs = configs()
        pred = model.predict([encode(size, ranks, c) for c in cs])
        picks.append([cs[j] for j in np.argsort(pred)[:K]])
    return picks


def pick_hybrid(instances, reports, cal, direction):
    picks = []
    for _instance, rep in zip(instances, reports):
        phases = [ph for ph in predict.phases_of(rep) if any(p.direction == direction for p in ph.patterns)]
        for ph in phases:
            ph.patterns = [p for p in ph.patterns if p.direction == direction]
        scored = sorted((sum(ph.time(cal, hints_of(c)) for ph in phases), c) for c in configs())
        chosen, last = [], None
        for t, c in scored:  # distinct predictions: k different behaviours
            if last is None or abs(t - last) > 1e-3 * max(t, 1e-12):
                chosen.append(c)
                last = t
            if len(chosen) == K:
                break
        picks.append(chosen)
    return picks


def quantiles(xs):
    q = np.quantile(xs, [0.05, 0.25, 0.5, 0.75, 0.95])
    below = sum(1 for x in xs if x < 0.95) / len(xs)
    return " ".join(f"{v:5.2f}" for v in q) + f"   {100 * below:4.0f}%"


def time_predictions(path: str | None) -> int:
    """Seconds to predict and rank every point of a space by the study's objective (perf), as `--strategy
    hybrid` does before its first trial: the runs that give the reports are not timed."""
    from iotuner.tune import objective, strategies
    from iotuner.tune import space as spaces

    cal = calibration.Calibration.load(path)
    cases = {
        "h5ior, 2 x 1,024 calls of 16 KiB, write + read": [
            native.executable("h5ior"),
            "-b",
            "16M",
            "-t",
            "16K",
            "-r",
            "-o",
            "{dir}/f",
        ],
        "strided, 2 x 64 calls of 8 blocks, write + read": [
            native.executable("bench_two_phase"),
            "{dir}/f",
            str(16 * KIB),
            "512",
            "strided",
            "both",
            "8",
        ],
    }
    print("prediction of every point of a space (objective perf), seconds; the report's run is not timed")
    print(f"  {'report':52s} {'space':9s} {'points':>6s} {'seconds':>8s}")
    for name, cmd in cases.items():
        with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
            rep = Path(d) / "report.json"
            res = runner.run(
                ["mpiexec.mpich", "-n", "2", *[str(c).replace("{dir}", d) for c in cmd]], report=rep, capture=True
            )
            if not res.ok:
                raise SystemExit(f"bench/hybrid: {name}: {res.stderr[-500:]}")
            report = json.loads(rep.read_text())
        for space_name in ("twophase", "romio", "tunio"):
            sp = spaces.load(space_name)
            t0 = time.monotonic()
            pred = predict.Predictor(report, cal, objective.parse("perf"))
            ranked = predict.rank_points(sp, pred, strategies.make("hybrid", sp, 0, {}).fixed())
            print(f"  {name:52s} {space_name:9s} {len(ranked):6d} {time.monotonic() - t0:8.2f}", flush=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--calibration", help="calibration file (default: run `iotuner calibrate` on /dev/shm first)")
    ap.add_argument("--truth", help="reuse a ground-truth JSON written by an earlier run (--save-truth)")
    ap.add_argument("--save-truth", help="write the ground truth here")
    ap.add_argument(
        "--pattern",
        choices=("contiguous", "strided", "sparse"),
        default="contiguous",
        help="the instances' access pattern (default: contiguous, as in the paper)",
    )
    ap.add_argument("--quick", action="store_true", help="3 sizes x 2 ranks, 2 repetitions (checks the script)")
    ap.add_argument(
        "--predict",
        action="store_true",
        help="only time the strategy's prediction of whole spaces from run reports of bundled kernels",
    )
    args = ap.parse_args()
    if args.predict:
        return time_predictions(args.calibration)
    sizes = [64 * KIB, MIB, 16 * MIB] if args.quick else SIZES
    if args.quick:
        args.reps = min(args.reps, 2)
    instances = [(s, r) for r in RANKS for s in sizes]
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch, tempfile.TemporaryDirectory() as out:
        if args.calibration:
            cal = calibration.Calibration.load(args.calibration)
        else:
            path = Path(out) / "calibration.json"
            t0 = time.monotonic()
            with Locked():
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "iotuner",
                        "calibrate",
                        "--passes",
                        "2",
                        "--dir",
                        scratch,
                        "--output",
                        str(path),
                    ],
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
            cal = calibration.Calibration.load(path)
            print(f"calibration: {time.monotonic() - t0:.0f} s")
        for name, s in cal.surrogates.items():
            print(f"  {name:10s} {s.learner:14s} R2 {s.cv_r2:6.3f}  RMSE {s.cv_rmse_s:.2e} s")
        if args.truth:
            raw = json.loads(Path(args.truth).read_text())
            if raw.get("pattern", "contiguous") != args.pattern:
                raise SystemExit(
                    f"bench/hybrid: {args.truth} holds the {raw.get('pattern', 'contiguous')} pattern; "
                    f"add --pattern {raw.get('pattern', 'contiguous')}"
                )
            truth_w = [{tuple(json.loads(k)): v[0] for k, v in t.items()} for t in raw["times"]]
            truth_r = [{tuple(json.loads(k)): v[1] for k, v in t.items()} for t in raw["times"]]
            reports = raw["reports"]
        else:
            truth_w, truth_r, reports = [], [], []
            t0 = time.monotonic()
            for size, ranks in instances:
                got = run_instance(size, ranks, args.pattern, Path(scratch), Path(out))
                truth_w.append({c: t[0] for c, t in got["times"].items()})
                truth_r.append({c: t[1] for c, t in got["times"].items()})
                reports.append(got["report"])
                print(
                    f"  ground truth {size // KIB:6d} KiB x {ranks} rank(s): {len(got['times'])} configurations",
                    flush=True,
                )
            print(f"ground truth: {len(instances) * len(configs())} runs in {time.monotonic() - t0:.0f} s")
            if args.save_truth:
                Path(args.save_truth).write_text(
                    json.dumps(
                        {
                            "pattern": args.pattern,
                            "times": [
                                {json.dumps(list(c)): [truth_w[i][c], truth_r[i][c]] for c in configs()}
                                for i in range(len(instances))
                            ],
                            "reports": reports,
                        }
                    )
                )
    for direction, truth in (("write", truth_w), ("read", truth_r)):
        best = [t[DEFAULT] / min(t.values()) for t in truth]
        print(
            f"\n{direction}s: speedup over the default, quantiles 5/25/50/75/95% over instances x repetitions, "
            f"and the share of picks slower than the default (< 0.95x)"
        )
        print(f"  {'optimal':24s} {quantiles(best)}")
        print(
            f"  {'default optimal or near (>= 0.95 of best)':24s} "
            f"{sum(1 for b in best if b <= 1 / 0.95)}/{len(best)} instances"
        )
        for sigma in SIGMAS:
            rng = random.Random(12 + int(sigma * 1000))
            res = {"rs": [], "ml": [], "hybrid": []}
            by_rep = {m: [] for m in res}  # repetitions x instances, for Fig. 8's per-instance bars
            for _ in range(args.reps):
                for m in ("rs", "ml", "hybrid"):
                    if m == "rs":
                        picks = pick_rs(truth, rng)
                    elif m == "ml":
                        picks = pick_ml(truth, instances, rng, sigma)
                    else:
                        noisy = np.random.default_rng(rng.randrange(1 << 30))
                        c = cal if not sigma else cal.refit(calibration.with_noise(cal.records, sigma, noisy))
                        picks = pick_hybrid(instances, reports, c, direction)
                    got = speedups(truth, picks)
                    res[m] += got
                    by_rep[m].append(got)
                    if m == "ml" and not sigma:  # Fig. 10: fewer training points (the paper's 66 and 33 of 99)
                        for per in (2, 1):
                            name = f"ml, {per * len(instances)} points"
                            res[name] = res.get(name, []) + speedups(truth, pick_ml(truth, instances, rng, 0.0, per))
            for m, xs in res.items():
                if sigma and m == "rs":
                    continue  # random search has no training data: noise does not apply
                print(f"  sigma {sigma:<5g} {m:16s} {quantiles(xs)}   mean {statistics.mean(xs):5.2f}")
            if not sigma:
                per_instance(instances, best, by_rep)
    return 0


def per_instance(instances, best, by_rep):
    """Fig. 8 as a table: each instance's speedup, the median over the repetitions, and the worst one."""
    print("  per instance (Fig. 8), sigma 0: median over repetitions [worst]")
    print(f"    {'KiB/rank':>9s} {'ranks':>5s} {'optimal':>8s} " + " ".join(f"{m:>14s}" for m in by_rep))
    for i, (size, ranks) in enumerate(instances):
        cells = []
        for reps in by_rep.values():
            xs = [r[i] for r in reps]
            cells.append(f"{statistics.median(xs):6.2f} [{min(xs):5.2f}]")
        print(f"    {size // KIB:9d} {ranks:5d} {best[i]:8.2f} " + " ".join(f"{c:>14s}" for c in cells))


if __name__ == "__main__":
    sys.exit(main())
