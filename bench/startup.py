#!/usr/bin/env python3
"""Start-up time of the commands people type most: iotuner --help, check and run.

Each command is started as a user would (a new Python process through the
installed entry point), interleaved, many times; prints the median and the
90th percentile of the wall time, against the 0.25 s target. `run` starts
`true` under the runtime library, so its figure includes one trivial job.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 0.25


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=20)
    opts = ap.parse_args()
    exe = shutil.which("iotuner") or str(Path(sys.executable).with_name("iotuner"))
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "s.json"
        doc.write_text(json.dumps({"version": 1, "mpiio": {"cb_buffer_size": "4M"}}))
        commands = {
            "iotuner --help": [exe, "--help"],
            "iotuner check FILE": [exe, "check", str(doc)],
            "iotuner run -- true": [exe, "run", "--", "true"],
            "iotuner tune --help": [exe, "tune", "--help"],
        }
        times: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(opts.rounds):  # interleaved, so drift hits every command alike
            for name, cmd in commands.items():
                start = time.perf_counter()
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp, check=True)
                times[name].append(time.perf_counter() - start)
    print(f"start-up wall time over {opts.rounds} interleaved rounds (target {TARGET_S} s for --help, check, run)")
    print(f"  {'command':24s} {'median':>8s} {'p90':>8s}")
    for name, ts in times.items():
        p90 = sorted(ts)[int(0.9 * (len(ts) - 1))]
        mark = "" if "tune" in name else ("  ok" if statistics.median(ts) < TARGET_S else "  OVER")
        print(f"  {name:24s} {statistics.median(ts):7.3f}s {p90:7.3f}s{mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
