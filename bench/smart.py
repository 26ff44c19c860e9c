#!/usr/bin/env python3
"""Smart mode measured side by side, in one run.

Overhead: a kernel with many small calls (h5ior, 4 KiB independent transfers,
a few thousand H5Dwrite per rank and phase) in pass-through (the library
with an empty settings file) and in smart mode, in a short run (6 phases,
half of them learned into the grammar) and a long one (24 phases, where
most phases only score their predictions). The smart runs use a rules
table that decides nothing, so both do the same I/O and the difference is
smart mode's own work: interning, the grammar, prediction, extraction.
Rounds alternate the two (paired), and the figure is the median over rounds
of each round's ratio of the kernel's own write time, with a 95% confidence
interval for that median (order statistics: no assumption on the noise).
Smart mode's self-measured overhead is shown beside it.

Speedup per phase: workloads whose defaults are poor here, smart mode (the
built-in SmartIO rules) against the plain run, phase by phase: the median
over rounds of each phase's bandwidth ratio, from the run reports.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from iotuner import native, runner

NO_OP_RULES = {
    "version": 1,
    "name": "observe",
    "description": "benchmark: decide nothing",
    "rules": [
        {
            "id": 1,
            "title": "observe only",
            "source": "benchmark",
            "evaluated": False,
            "cases": [{"when": {}, "set": {}}],
        }
    ],
}


def run(
    app: list[str],
    workdir: Path,
    *,
    smart: bool,
    rules: Path | None,
    launcher: list[str],
    extra_env: dict | None = None,
) -> tuple[float, dict]:
    for f in workdir.glob("*.h5"):
        f.unlink()
    cfg = workdir / "empty.json"
    cfg.write_text('{"version": 1}')
    env = runner.environment(cfg, workdir / "report.json", base=dict(os.environ, **(extra_env or {})))
    if smart:
        env["IOTUNER_SMART"] = "1"
        if rules:
            env["IOTUNER_SMART_RULES"] = str(rules)
    out = subprocess.run(launcher + [*app, "-o", str(workdir)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"run failed: {out.stderr[-2000:]}")
    seconds = float(re.search(r"write: .* time=([0-9.]+) s", out.stdout).group(1))
    return seconds, json.loads((workdir / "report.json").read_text())


def median_interval(xs: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free interval for the median: the order statistics k and n-1-k, where k is the largest index
    with P(Binomial(n, 1/2) <= k) <= (1 - confidence) / 2."""
    xs, n = sorted(xs), len(xs)
    k, cdf = -1, 0.0
    for i in range(n):
        cdf += math.comb(n, i) / 2**n
        if cdf > (1 - confidence) / 2:
            break
        k = i
    return (xs[k], xs[n - 1 - k]) if k >= 0 else (xs[0], xs[-1])


def overhead(opts, workdir: Path, launcher: list[str], phases: int) -> None:
    """Smart mode learns a phase of each settings state twice, then only scores its predictions: a short run
    pays the learning, a long one mostly the scoring."""
    rules = workdir / "no-op-rules.json"
    rules.write_text(json.dumps(NO_OP_RULES))
    app = [str(native.executable("h5ior")), "-b", "16M", "-t", "4K", "-m", "independent", "-i", str(phases)]
    run(app, workdir, smart=False, rules=None, launcher=launcher)  # warm-up
    ratios, plain_t, smart_t, own = [], [], [], []
    calls = learned = 0
    for r in range(opts.rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        times = {}
        for smart in order:
            t, rep = run(app, workdir, smart=smart, rules=rules, launcher=launcher)
            times[smart] = t
            if smart:
                s = rep["smart"]
                own.append(s["overhead"]["total_s"])
                learned = s["grammar"]["calls"]
                calls = (
                    sum(
                        p["hdf5"]["dataset_writes"] + p["mpiio"]["write_calls"]
                        for p in rep["phases"]
                        if p["kind"] == "hdf5"
                    )
                    // opts.ranks
                )
        plain_t.append(times[False])
        smart_t.append(times[True])
        ratios.append(times[True] / times[False])
    lo, hi = median_interval(ratios)
    print(
        f"overhead: h5ior -b 16M -t 4K independent, {phases} phases, {opts.ranks} ranks, {opts.rounds} paired rounds: "
        f"{calls} HDF5 + MPI-IO data calls per rank, {learned} of them learned into the grammar"
    )
    print(f"  pass-through write time  median {statistics.median(plain_t):.4f} s")
    print(f"  smart mode write time    median {statistics.median(smart_t):.4f} s")
    print(
        f"  ratio smart / pass-through: median {statistics.median(ratios):.3f} (95% interval of the median "
        f"{lo:.3f}..{hi:.3f}; target under 1.03)"
    )
    print(
        f"  smart mode's own measure of its work: median {statistics.median(own) * 1e3:.2f} ms per run "
        f"({statistics.median(own) / statistics.median(smart_t) * 100:.1f}% of the write time; slowest rank)"
    )


def speedup(opts, workdir: Path, launcher: list[str]) -> None:
    hints = workdir / "site-romio-hints"
    hints.write_text("romio_cb_write enable\n")  # a site default forcing one collective-buffering aggregator
    cases = {
        "h5ior (IOR-like, poor site ROMIO_HINTS)": (
            [str(native.executable("h5ior")), "-b", "32M", "-t", "1M", "-i", str(opts.phases)],
            {"ROMIO_HINTS": str(hints)},
        ),
        "flashio (collective, many small datasets)": [str(native.executable("flashio")), "-t", str(opts.phases)],
        "h5ior (collective 1 MiB, IOR-like)": [
            str(native.executable("h5ior")),
            "-b",
            "32M",
            "-t",
            "1M",
            "-i",
            str(opts.phases),
        ],
        "vpicio (collective, 8 variables)": [
            str(native.executable("vpicio")),
            "-n",
            "512K",
            "-t",
            str(opts.phases),
            "-F",
        ],
    }
    print(
        f"\nspeedup per phase: smart mode (built-in rules) / plain run, median over {opts.speed_rounds} paired rounds "
        f"(phase 0 is learned with the default settings)"
    )
    for name, case in cases.items():
        app, extra = case if isinstance(case, tuple) else (case, None)
        per_phase: list[list[float]] = [[] for _ in range(opts.phases)]
        fired = None
        for r in range(opts.speed_rounds):
            reports = {}
            for smart in (False, True) if r % 2 == 0 else (True, False):
                reports[smart] = run(app, workdir, smart=smart, rules=None, launcher=launcher, extra_env=extra)[1]
            plain = [p["bandwidth_mib_s"] for p in reports[False]["phases"] if p["created"] and p["kind"] == "hdf5"]
            smart_bw = [p["bandwidth_mib_s"] for p in reports[True]["phases"] if p["created"] and p["kind"] == "hdf5"]
            for i, (a, b) in enumerate(zip(smart_bw, plain)):
                per_phase[i].append(a / b)
            learned = reports[True]["smart"]["phases"][0]
            fired = {k: v for k, v in learned["rules"]["settings"].items()}
        cells = " ".join(f"{statistics.median(x):5.2f}" for x in per_phase if x)
        print(f"  {name:42s} phases 0..{opts.phases - 1}: {cells}")
        print(f"  {'':42s} settings from phase 1: {fired}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=25, help="paired rounds for the overhead (default 25)")
    ap.add_argument("--mpiexec", default="mpiexec.mpich", help="MPI launcher (default mpiexec.mpich)")
    ap.add_argument("--ranks", type=int, default=2, help="ranks (default 2: one per core here)")
    ap.add_argument("--speed-rounds", type=int, default=5, help="paired rounds for the speedups (default 5)")
    ap.add_argument("--phases", type=int, default=6, help="phases of a run (default 6)")
    ap.add_argument("--long-phases", type=int, default=24, help="phases of the long run for the overhead (default 24)")
    ap.add_argument(
        "--dir",
        default="/dev/shm" if os.access("/dev/shm", os.W_OK) else None,
        help="scratch directory (default /dev/shm: 1-10%% noise here, against 15-35%% on disk)",
    )
    ap.add_argument("--skip-speedup", action="store_true")
    opts = ap.parse_args()
    if not shutil.which(opts.mpiexec):
        sys.exit(f"{opts.mpiexec} not found (give --mpiexec)")
    launcher = [opts.mpiexec, "-n", str(opts.ranks)]
    with tempfile.TemporaryDirectory(prefix="iotuner-smart-", dir=opts.dir) as tmp:
        for phases in (opts.phases, opts.long_phases):
            overhead(opts, Path(tmp), launcher, phases)
        if not opts.skip_speedup:
            speedup(opts, Path(tmp), launcher)
    return 0


if __name__ == "__main__":
    sys.exit(main())
