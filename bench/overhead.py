#!/usr/bin/env python3
"""Overhead of libiotuner.so on its hot paths, measured side by side.

bench_overhead makes about a million small POSIX writes, then many small
H5Dwrite calls, and times both loops itself. It runs in three configurations:
- no library;
- the library with a pass-through settings file;
- the library with a full settings file, which sets every knob that applies
  to this program at its default value. The whole apply-and-verify machinery
  runs while the program's I/O stays the same, so the ratio is the library's
  own cost.

Wall clock: each round runs the three configurations back to back, in
rotated order, pinned to one core. The figure is the median over rounds of
each round's ratio (configuration / no library). Pairing within a round
cancels the slow drift of this machine; the spread is shown.

Instructions (--instructions): callgrind counts of the same program, which are
repeatable whatever the machine is doing. Each configuration runs at two call
counts, so the fixed costs (start-up, the report) cancel and what remains is
the number of extra instructions per intercepted call.
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

PASS_THROUGH = {"version": 1}
FULL = {
    "version": 1,
    "hdf5": {
        "alignment": [1, 1],
        "meta_block_size": 2048,
        "sieve_buf_size": 65536,
        "small_data_block_size": 2048,
        "mdc_initial_size": "2M",
        "chunk_cache_nslots": 521,
        "chunk_cache_nbytes": "1M",
        "chunk_cache_w0": 0.75,
        "transfer_mode": "independent",
    },
    "mpiio": {"romio_cb_write": "automatic", "romio_cb_read": "automatic", "cb_buffer_size": "16M"},
    "lustre": {"stripe_count": 4},
    "groups": [
        {"file": "*.dat", "hdf5": {"sieve_buf_size": 65536}},
        {"file": "*.h5", "dataset": "val*", "hdf5": {"transfer_mode": "independent"}},
    ],
}
CONFIGS = ("no library", "pass-through", "full settings")


def command(config: str, workdir: Path, args: list[str], prefix: list[str]) -> tuple[list[str], dict | None]:
    cmd = prefix + [str(native.executable("bench_overhead")), str(workdir), *args]
    if config == "no library":
        return cmd, None
    cfg = workdir / f"{config.replace(' ', '-')}.json"
    cfg.write_text(json.dumps(PASS_THROUGH if config == "pass-through" else FULL))
    return cmd, runner.environment(cfg, workdir / "report.json")


def run_once(config: str, workdir: Path, args: list[str], pin: list[str]) -> dict[str, float]:
    cmd, env = command(config, workdir, args, pin)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"benchmark run failed ({config}): {out.stderr}")
    if env is not None:  # the library must really have been active
        rep = json.loads((workdir / "report.json").read_text())
        assert rep["settings"]["status"] == "loaded", rep["settings"]
    fields = dict(kv.split("=") for kv in out.stdout.split())
    return {"posix_s": float(fields["posix_s"]), "h5_s": float(fields["h5_s"])}


def instructions(config: str, workdir: Path, posix: int, h5: int) -> int:
    cmd, env = command(
        config,
        workdir,
        [str(posix), str(h5), "64"],
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={workdir}/callgrind.out"],
    )
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    m = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or not m:
        sys.exit(f"callgrind run failed ({config}): {out.stderr[-500:]}")
    return int(m.group(1))


def wall_clock(opts, workdir: Path) -> None:
    pin = ["taskset", "-c", str(opts.cpu)] if shutil.which("taskset") and opts.cpu >= 0 else []
    args = [str(opts.posix_writes), str(opts.h5_writes), str(opts.bytes)]
    run_once("no library", workdir, ["1000", "100", "64"], pin)  # warm-up: page cache, loader
    rounds = []
    for r in range(opts.rounds):
        order = CONFIGS[r % 3 :] + CONFIGS[: r % 3]  # no configuration always runs first
        rounds.append({c: run_once(c, workdir, args, pin) for c in order})
    print(
        f"wall clock: {opts.posix_writes} POSIX writes and {opts.h5_writes} H5Dwrite calls of {opts.bytes} bytes, "
        f"{opts.rounds} rounds{', pinned to CPU ' + str(opts.cpu) if pin else ''}, files in {workdir.parent}"
    )
    print(
        f"  {'configuration':15s} {'POSIX loop':>10s} {'ratio':>7s} {'IQR':>13s}   {'H5Dwrite loop':>13s} "
        f"{'ratio':>7s} {'IQR':>13s}"
    )
    for c in CONFIGS:
        cells = []
        for key in ("posix_s", "h5_s"):
            ratios = sorted(r[c][key] / r["no library"][key] for r in rounds)
            q = statistics.quantiles(ratios, n=4)
            med = statistics.median(r[c][key] for r in rounds)
            cells.append(f"{med:9.4f}s {statistics.median(ratios):7.3f} {q[0]:6.3f}..{q[2]:5.3f}")
        print(f"  {c:15s} {cells[0]}   {cells[1]:>13s}")


def instruction_counts(opts, workdir: Path) -> None:
    if not shutil.which("valgrind"):
        print("instructions: valgrind not found, skipped")
        return
    lo, hi = (50_000, 5_000), (150_000, 15_000)
    print("instructions (callgrind, repeatable): extra instructions per call, from runs at two call counts")
    base = {}
    for c in CONFIGS:
        a = instructions(c, workdir, lo[0], 0)
        b = instructions(c, workdir, hi[0], 0)
        e = instructions(c, workdir, 0, lo[1])
        f = instructions(c, workdir, 0, hi[1])
        per_write = (b - a) / (hi[0] - lo[0])
        per_h5 = (f - e) / (hi[1] - lo[1])
        if c == "no library":
            base = {"write": per_write, "h5": per_h5}
            print(f"  {c:15s} write(): {per_write:7.1f} instr/call           H5Dwrite: {per_h5:8.1f} instr/call")
        else:
            print(
                f"  {c:15s} write(): {per_write - base['write']:+7.1f} instr/call "
                f"({per_write / base['write'] - 1:+.2%})   H5Dwrite: {per_h5 - base['h5']:+8.1f} instr/call "
                f"({per_h5 / base['h5'] - 1:+.2%})"
            )
    print(
        "  (user-space instructions only: the kernel's share of write() is not counted, so for write() the "
        "relative figure overstates the overhead)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15, help="rounds of the three configurations (default 15, min 5)")
    ap.add_argument("--posix-writes", type=int, default=1_000_000)
    ap.add_argument("--h5-writes", type=int, default=100_000)
    ap.add_argument("--bytes", type=int, default=64, help="bytes per write (default 64)")
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary directory here)")
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1, help="pin runs to this CPU (-1: no pinning)")
    ap.add_argument("--instructions", action="store_true", help="also count instructions with callgrind")
    opts = ap.parse_args()
    if opts.rounds < 5:
        ap.error("--rounds must be at least 5")
    with tempfile.TemporaryDirectory(prefix="iotuner-overhead-", dir=opts.dir or Path.cwd()) as tmp:
        wall_clock(opts, Path(tmp))
        if opts.instructions:
            instruction_counts(opts, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
