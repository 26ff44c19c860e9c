#!/usr/bin/env python3
"""Regenerates TunIO's pretrained agents, deterministically for a seed.

    bench/tunio_pretrain.py picker [SWEEP.json ...]   # default: bench/data/tunio-sweeps/*.json
    bench/tunio_pretrain.py stopper

picker: from recorded parameter sweeps of bundled kernels (bench/tunio_sweep.py),
the knobs' prior impacts (PCA over the parameters with respect to perf), then
the state observer and the subset picker trained on emulated tuning sessions
on the sweeps' surrogates (iotuner.tune.strategies.tunio.pretrain.train_picker). Writes
python/iotuner/tune/strategies/tunio/data/tunio-picker.json.

stopper: Q-learning on synthetic logarithmic tuning curves with random
downward shifts (iotuner.tune.strategies.tunio.pretrain.train_stopper). Writes
python/iotuner/tune/strategies/tunio/data/tunio-stopper.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from iotuner.tune.strategies.tunio import impact, pretrain
from iotuner.tune.strategies.tunio import stopper as stoppers

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("picker", "stopper"))
    ap.add_argument("sweeps", nargs="*", help="recorded sweeps (picker)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--episodes", type=int, help="training episodes (default: 3000 picker, 20000 stopper)")
    ap.add_argument("--out", help="where to write (default: the policy file the tuner reads)")
    opts = ap.parse_args()
    start = time.time()
    if opts.what == "picker":
        paths = opts.sweeps or sorted(str(p) for p in (HERE / "data" / "tunio-sweeps").glob("*.json"))
        if not paths:
            sys.exit("no sweeps: record some with bench/tunio_sweep.py")
        sweeps = [pretrain.load_sweep(p) for p in paths]
        policy = pretrain.train_picker(sweeps, seed=opts.seed, episodes=opts.episodes or 3000)
        out = Path(opts.out or impact.POLICY_FILE)
        policy.save(out)
        print(
            f"picker: {len(sweeps)} sweeps ({', '.join(s.name for s in sweeps)}), {policy.meta['episodes']} "
            f"episodes; share of the best gain reached in the last episodes "
            f"{policy.meta['share_of_best_gain_reached_last_episodes']:.1%}"
        )
        top = sorted(policy.priors.items(), key=lambda kv: -kv[1])[:5]
        print("  strongest priors: " + ", ".join(f"{k} {v:.2f}" for k, v in top))
    else:
        try:
            policy = pretrain.train_stopper(seed=opts.seed, episodes=opts.episodes or 20000)
        except pretrain.MissingExtra as e:
            sys.exit(f"tunio_pretrain.py: {e}")
        out = Path(opts.out or stoppers.POLICY_FILE)
        policy.save(out)
        print(
            f"stopper: {policy.meta['episodes']} curves; share of the best RoTI in the last episodes "
            f"{policy.meta['mean_share_of_best_roti_last_episodes']:.1%}"
        )
    print(f"  wrote {out} ({out.stat().st_size:,} bytes) in {time.time() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
