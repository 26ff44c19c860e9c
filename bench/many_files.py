#!/usr/bin/env python3
"""Cost of libiotuner.so for a serial program that creates many small files.

bench_many_files creates FILES files of BYTES each (open, write, close), one
after another, and times its own loop. Each round runs it without the library
and with it (pass-through settings, a report written at exit), in alternating
order; files are removed between runs, outside the timing. The figures are the
median over rounds of each round's ratio (library / no library), for the
program's loop and for the whole process (start-up and the report at exit
included), with the interquartile range.

The target: within 10% of the plain time (the runtime once took 7.6x here,
its phase lookups growing with the number of files).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iotuner import native, runner


def run_once(with_library: bool, workdir: Path, files: int, size: int, pin: list[str]) -> tuple[float, float]:
    data = workdir / "files"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir()
    report = workdir / "report.json"
    report.unlink(missing_ok=True)
    env = None
    if with_library:
        cfg = workdir / "pass-through.json"
        cfg.write_text(json.dumps({"version": 1}))
        env = runner.environment(cfg, report)
    cmd = pin + [str(native.executable("bench_many_files")), str(data), str(files), str(size)]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"benchmark run failed: {out.stderr}")
    if with_library:  # the library was active and saw every file
        rep = json.loads(report.read_text())
        seen = sum(p["files"] for p in rep["phases"])
        written = rep["totals"]["bytes_written"]
        if seen != files or written != files * size:
            sys.exit(f"the report saw {seen} files and {written} bytes, not {files} and {files * size}")
    loop = float(dict(kv.split("=") for kv in out.stdout.split())["loop_s"])
    return loop, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=32000)
    ap.add_argument("--bytes", type=int, default=4096, help="bytes per file (default 4096)")
    ap.add_argument("--rounds", type=int, default=15, help="rounds of both configurations (default 15, min 5)")
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1, help="pin runs to this CPU (-1: no pinning)")
    ap.add_argument(
        "--dir",
        default="/dev/shm" if os.path.isdir("/dev/shm") else None,
        help="where the files go (default /dev/shm: the disk here adds 15-35%% noise)",
    )
    opts = ap.parse_args()
    if opts.rounds < 5:
        ap.error("--rounds must be at least 5")
    with tempfile.TemporaryDirectory(prefix="iotuner-many-files-", dir=opts.dir) as tmp:
        workdir = Path(tmp)
        pin = ["taskset", "-c", str(opts.cpu)] if shutil.which("taskset") and opts.cpu >= 0 else []
        run_once(False, workdir, 1000, opts.bytes, pin)  # warm-up: loader, page cache, directory
        rounds = []
        for r in range(opts.rounds):
            order = (False, True) if r % 2 == 0 else (True, False)
            rounds.append({lib: run_once(lib, workdir, opts.files, opts.bytes, pin) for lib in order})
    print(
        f"{opts.files} files of {opts.bytes} bytes, one after another, {opts.rounds} rounds (alternating order"
        f"{', pinned to CPU ' + str(opts.cpu) if pin else ''}), files in {opts.dir or 'a temporary directory'}"
    )
    print(f"  {'':22s} {'no library':>11s} {'library':>11s} {'ratio':>7s} {'IQR':>13s}")
    for i, what in enumerate(("program's loop", "whole process")):
        ratios = sorted(rd[True][i] / rd[False][i] for rd in rounds)
        q = statistics.quantiles(ratios, n=4)
        plain = statistics.median(rd[False][i] for rd in rounds)
        lib = statistics.median(rd[True][i] for rd in rounds)
        print(f"  {what:22s} {plain:10.3f}s {lib:10.3f}s {statistics.median(ratios):7.3f} {q[0]:6.3f}..{q[2]:5.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
