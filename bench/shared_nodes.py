#!/usr/bin/env python3
"""What two trials side by side on shared nodes do to a measurement.

The same trial (h5ior, 2 ranks, default settings and the one-aggregator
baseline) is measured alone and with a second identical job running at the
same time on the same node, in interleaved rounds. Prints, for each
configuration, the median write bandwidth alone and shared, their ratio, and
the spread (1.48 MAD / median) of each: the price of running workers side by
side, and why the confirmation round runs alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
from pathlib import Path

from iotuner import native, runner, settings

CONFIGS = {"default": {"version": 1}, "one aggregator": {"version": 1, "mpiio": {"romio_cb_write": "enable"}}}


def spread(xs):
    m = statistics.median(xs)
    return 1.4826 * statistics.median(abs(x - m) for x in xs) / m


def run(doc_path: Path, out: Path, label: str) -> float:
    app = [str(native.executable("h5ior")), "-b", "32M", "-t", "1M", "-o", str(out / label)]
    (out / label).mkdir(parents=True, exist_ok=True)
    r = runner.run(
        ["mpiexec.mpich", "-n", "2", *app], config=doc_path, report=out / f"{label}.json", capture=True, timeout=300
    )
    if r.returncode != 0 or r.report is None:
        sys.exit(f"run failed: {r.stderr[-1000:]}")
    return r.report.totals["write_bandwidth_mib_s"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=8)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        out = Path(tmp)
        docs = {}
        for name, doc in CONFIGS.items():
            docs[name] = settings.save(doc, out / f"{name.replace(' ', '-')}.json")
        alone = {n: [] for n in CONFIGS}
        shared = {n: [] for n in CONFIGS}
        for rnd in range(opts.rounds):
            for name, path in docs.items():
                alone[name].append(run(path, out, f"alone-{rnd}"))
                other = threading.Thread(target=run, args=(path, out, f"other-{rnd}"))
                other.start()  # a second worker's trial on the same node, at the same time
                shared[name].append(run(path, out, f"shared-{rnd}"))
                other.join()
    print(f"h5ior -b 32M -t 1M, 2 ranks on /dev/shm, {opts.rounds} interleaved rounds; write bandwidth (MiB/s)")
    print(f"  {'settings':16s} {'alone':>9s} {'spread':>7s} {'shared':>9s} {'spread':>7s} {'shared/alone':>13s}")
    for name in CONFIGS:
        a, s = statistics.median(alone[name]), statistics.median(shared[name])
        print(f"  {name:16s} {a:9.0f} {spread(alone[name]):6.0%} {s:9.0f} {spread(shared[name]):6.0%} {s / a:13.2f}")
    gain_alone = statistics.median(alone["default"]) / statistics.median(alone["one aggregator"])
    gain_shared = statistics.median(shared["default"]) / statistics.median(shared["one aggregator"])
    print(f"  the default's gain over one aggregator: {gain_alone:.2f}x alone, {gain_shared:.2f}x shared")
    print(json.dumps({"alone": alone, "shared": shared}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
