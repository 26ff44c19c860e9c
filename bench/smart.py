#!/usr/bin/env python3
"""Smart mode measured side by side, in one run.

Overhead: a kernel with many small calls (h5ior, 4 KiB independent transfers,
a few thousand H5Dwrite per rank and phase) in pass-through (the library
with an empty settings file) and in smart mode. The smart runs use a rules
table that decides nothing, so both do the same I/O and the difference is
smart mode's own work: interning, the grammar, prediction, extraction.
Rounds alternate the two (pinned, paired), and the figure is the median over
rounds of each round's ratio of the kernel's own write time. Smart mode's
self-measured overhead is shown beside it.

Speedup per phase: workloads whose defaults are poor here, smart mode (the
built-in SmartIO rules) against the plain run, phase by phase: the median
over rounds of each phase's bandwidth ratio, from the run reports.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from iotuner import native, runner

NO_OP_RULES = {"version": 1, "name": "observe", "description": "benchmark: decide nothing",
               "rules": [{"id": 1, "title": "observe only", "source": "benchmark", "evaluated": False,
                          "cases": [{"when": {}, "set": {}}]}]}


def run(app: list[str], workdir: Path, *, smart: bool, rules: Path | None, pin: list[str],
        extra_env: dict | None = None) -> tuple[float, dict]:
    for f in workdir.glob("*.h5"):
        f.unlink()
    cfg = workdir / "empty.json"
    cfg.write_text('{"version": 1}')
    env = runner.environment(cfg, workdir / "report.json", base=dict(os.environ, **(extra_env or {})))
    if smart:
        env["IOTUNER_SMART"] = "1"
        if rules:
            env["IOTUNER_SMART_RULES"] = str(rules)
    out = subprocess.run(pin + ["mpiexec.mpich", "-n", "2", *app, "-o", str(workdir)], env=env, capture_output=True,
                         text=True)
    if out.returncode != 0:
        sys.exit(f"run failed: {out.stderr[-2000:]}")
    seconds = float(re.search(r"write: .* time=([0-9.]+) s", out.stdout).group(1))
    return seconds, json.loads((workdir / "report.json").read_text())


def overhead(opts, workdir: Path, pin: list[str]) -> None:
    rules = workdir / "no-op-rules.json"
    rules.write_text(json.dumps(NO_OP_RULES))
    app = [str(native.executable("h5ior")), "-b", "16M", "-x", "4K", "-m", "independent", "-t", str(opts.phases), "-F"]
    run(app, workdir, smart=False, rules=None, pin=pin)  # warm-up
    ratios, plain_t, smart_t, own = [], [], [], []
    calls = 0
    for r in range(opts.rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        times = {}
        for smart in order:
            t, rep = run(app, workdir, smart=smart, rules=rules, pin=pin)
            times[smart] = t
            if smart:
                s = rep["smart"]
                own.append(s["overhead"]["total_s"])
                calls = s["grammar"]["calls"]
        plain_t.append(times[False])
        smart_t.append(times[True])
        ratios.append(times[True] / times[False])
    q = statistics.quantiles(ratios, n=4)
    print(f"overhead: h5ior -b 16M -x 4K independent, {opts.phases} phases, 2 ranks ({calls} HDF5 + MPI-IO calls "
          f"per rank in the grammar), {opts.rounds} paired rounds{' pinned' if pin else ''}")
    print(f"  pass-through write time  median {statistics.median(plain_t):.4f} s")
    print(f"  smart mode write time    median {statistics.median(smart_t):.4f} s")
    print(f"  ratio smart / pass-through: median {statistics.median(ratios):.3f} (interquartile {q[0]:.3f}..{q[2]:.3f})")
    print(f"  smart mode's own measure of its work: median {statistics.median(own) * 1e3:.2f} ms per run "
          f"({statistics.median(own) / statistics.median(smart_t) * 100:.1f}% of the write time; slowest rank)")


def speedup(opts, workdir: Path, pin: list[str]) -> None:
    hints = workdir / "site-romio-hints"
    hints.write_text("romio_cb_write enable\n")  # a site default forcing one collective-buffering aggregator
    cases = {
        "h5ior (IOR-like, poor site ROMIO_HINTS)": ([str(native.executable("h5ior")), "-b", "32M", "-x", "1M", "-t",
                                                    str(opts.phases), "-F"], {"ROMIO_HINTS": str(hints)}),
        "flashio (collective, many small datasets)": [str(native.executable("flashio")), "-t", str(opts.phases)],
        "h5ior (collective 1 MiB, IOR-like)": [str(native.executable("h5ior")), "-b", "32M", "-x", "1M", "-t",
                                               str(opts.phases), "-F"],
        "vpicio (collective, 8 variables)": [str(native.executable("vpicio")), "-n", "512K", "-t", str(opts.phases),
                                             "-F"],
    }
    print(f"\nspeedup per phase: smart mode (built-in rules) / plain run, median over {opts.speed_rounds} paired rounds "
          f"(phase 0 is learned with the default settings)")
    for name, case in cases.items():
        app, extra = case if isinstance(case, tuple) else (case, None)
        per_phase: list[list[float]] = [[] for _ in range(opts.phases)]
        fired = None
        for r in range(opts.speed_rounds):
            reports = {}
            for smart in ((False, True) if r % 2 == 0 else (True, False)):
                reports[smart] = run(app, workdir, smart=smart, rules=None, pin=pin, extra_env=extra)[1]
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
    ap.add_argument("--rounds", type=int, default=9, help="paired rounds for the overhead (default 9)")
    ap.add_argument("--speed-rounds", type=int, default=5, help="paired rounds for the speedups (default 5)")
    ap.add_argument("--phases", type=int, default=6)
    ap.add_argument("--dir", default="/dev/shm" if os.access("/dev/shm", os.W_OK) else None,
                    help="scratch directory (default /dev/shm: 1-10%% noise here, against 15-35%% on disk)")
    ap.add_argument("--skip-speedup", action="store_true")
    opts = ap.parse_args()
    pin = ["taskset", "-c", "0,1"] if shutil.which("taskset") else []
    with tempfile.TemporaryDirectory(prefix="iotuner-smart-", dir=opts.dir) as tmp:
        overhead(opts, Path(tmp), pin)
        if not opts.skip_speedup:
            speedup(opts, Path(tmp), pin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
