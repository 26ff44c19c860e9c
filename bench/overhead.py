#!/usr/bin/env python3
"""Overhead of libiotuner.so on its hot paths, measured side by side.

Runs bench_overhead (about a million small POSIX writes, then many small
H5Dwrite calls) without the library, with the library and a pass-through
settings file, and with a full settings file, interleaved round by round so
that drift hits all three alike. Prints the median times and their ratios.

The full settings file sets every knob that applies to this program at its
default value: the whole apply-and-verify machinery runs, while the I/O the
program does stays the same, so the ratio is the library's own cost.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from iotuner import native, runner

PASS_THROUGH = {"version": 1}
FULL = {
    "version": 1,
    "hdf5": {"alignment": [1, 1], "meta_block_size": 2048, "sieve_buf_size": 65536, "small_data_block_size": 2048,
             "mdc_initial_size": "2M", "chunk_cache_nslots": 521, "chunk_cache_nbytes": "1M", "chunk_cache_w0": 0.75,
             "transfer_mode": "independent"},
    "mpiio": {"romio_cb_write": "automatic", "romio_cb_read": "automatic", "cb_buffer_size": "16M"},
    "lustre": {"stripe_count": 4},
    "groups": [{"file": "*.dat", "hdf5": {"sieve_buf_size": 65536}},
               {"file": "*.h5", "dataset": "val*", "hdf5": {"transfer_mode": "independent"}}],
}
CONFIGS = ("no library", "pass-through", "full settings")


def run_once(config: str, workdir: Path, args: list[str]) -> dict[str, float]:
    cmd = [str(native.executable("bench_overhead")), str(workdir), *args]
    if config == "no library":
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    else:
        doc = PASS_THROUGH if config == "pass-through" else FULL
        cfg = workdir / "settings.json"
        cfg.write_text(json.dumps(doc))
        result = runner.run(cmd, config=cfg, report=workdir / "report.json", capture=True)
        if not result.ok or result.report is None or result.report.settings["status"] != "loaded":
            sys.exit(f"benchmark run failed: {result.stderr}{result.report_error or ''}")
        out = result.stdout
    fields = dict(kv.split("=") for kv in out.split())
    return {"posix_s": float(fields["posix_s"]), "h5_s": float(fields["h5_s"])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7, help="runs per configuration (default 7, at least 5)")
    ap.add_argument("--posix-writes", type=int, default=1_000_000)
    ap.add_argument("--h5-writes", type=int, default=100_000)
    ap.add_argument("--bytes", type=int, default=64, help="bytes per write (default 64)")
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary directory here)")
    opts = ap.parse_args()
    if opts.rounds < 5:
        ap.error("--rounds must be at least 5")
    base = Path(opts.dir) if opts.dir else Path.cwd()
    args = [str(opts.posix_writes), str(opts.h5_writes), str(opts.bytes)]
    samples: dict[str, list[dict[str, float]]] = {c: [] for c in CONFIGS}
    with tempfile.TemporaryDirectory(prefix="iotuner-overhead-", dir=base) as tmp:
        workdir = Path(tmp)
        run_once("no library", workdir, ["1000", "100", "64"])  # warm-up: page cache, loader
        for r in range(opts.rounds):
            order = CONFIGS[r % 3:] + CONFIGS[:r % 3]  # rotate so no configuration always runs first
            for config in order:
                samples[config].append(run_once(config, workdir, args))
    print(f"overhead benchmark: {opts.posix_writes} POSIX writes and {opts.h5_writes} H5Dwrite calls of "
          f"{opts.bytes} bytes, {opts.rounds} interleaved rounds, files in {base}")
    print(f"{'configuration':16s} {'POSIX median':>13s} {'ratio':>7s} {'ns/call':>8s}   {'H5Dwrite median':>15s} "
          f"{'ratio':>7s} {'ns/call':>8s}")
    med = {c: {k: statistics.median(s[k] for s in samples[c]) for k in ("posix_s", "h5_s")} for c in CONFIGS}
    base_m = med["no library"]
    for c in CONFIGS:
        m = med[c]
        dp = (m["posix_s"] - base_m["posix_s"]) / opts.posix_writes * 1e9
        dh = (m["h5_s"] - base_m["h5_s"]) / opts.h5_writes * 1e9
        print(f"{c:16s} {m['posix_s']:12.4f}s {m['posix_s'] / base_m['posix_s']:7.3f} {dp:8.1f}   "
              f"{m['h5_s']:14.4f}s {m['h5_s'] / base_m['h5_s']:7.3f} {dh:8.1f}")
    spread = {c: (min(s["posix_s"] for s in samples[c]), max(s["posix_s"] for s in samples[c])) for c in CONFIGS}
    print("POSIX min..max per configuration: " + ", ".join(f"{c} {lo:.4f}..{hi:.4f}s"
                                                          for c, (lo, hi) in spread.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
