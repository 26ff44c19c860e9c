#!/usr/bin/env python3
"""Compare `iotuner advise` with Drishti on the example logs of the darshan wheel (docs/advise.md).

Usage: scripts/compare_drishti.py DRISHTI_PYTHON
DRISHTI_PYTHON is a Python with drishti-io installed (kept out of iotuner's environment:
python3 -m venv /tmp/drishti && /tmp/drishti/bin/pip install drishti-io). Prints a Markdown table.
Drishti 0.8 fails on a log without an executable name (dxt.darshan); it is run with that name
filled in, which changes nothing else.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# Drishti's codes -> the check of iotuner's table that looks for the same thing
DRISHTI_TO_IOTUNER = {
    "S01": "stdio-heavy",
    "M01": "no-mpiio",
    "P05": "small-reads",
    "P15": "small-reads",
    "P06": "small-writes",
    "P16": "small-writes",
    "P07": "misaligned-memory",
    "P08": "misaligned-file",
    "P09": "redundant-reads",
    "P10": "redundant-writes",
    "P11": "random-reads",
    "P13": "random-writes",
    "P12": "sequential-access",
    "P14": "sequential-access",
    "P17": "metadata-time",
    "P18": "shared-imbalance-bytes",
    "P19": "shared-imbalance-time",
    "P21": "rank-imbalance",
    "P22": "rank-imbalance",
    "M02": "no-collective-reads",
    "M03": "no-collective-writes",
    "M04": "collective-used",
    "M05": "collective-used",
    "M06": "blocking-io",
    "M07": "blocking-io",
    "M08": "aggregators-nodes",
    "M09": "aggregators-nodes",
    "M10": "aggregators-nodes",
}
INFO_ONLY = {"P01", "P02", "P03", "P04"}  # read/write intensive: statements, no finding in iotuner

RUN_DRISHTI = """
import sys, darshan
orig = darshan.DarshanReport.__init__
def init(self, *a, **k):
    orig(self, *a, **k)
    if not self.metadata.get('exe'):
        self.metadata['exe'] = 'unknown'
darshan.DarshanReport.__init__ = init
sys.argv = ['drishti', '--csv', '--export_dir', sys.argv[1], sys.argv[2]]
from drishti.reporter import main
main()
"""


def drishti_codes(python: str, log: Path, out: Path) -> set[str]:
    subprocess.run([python, "-c", RUN_DRISHTI, str(out), str(log)], capture_output=True, text=True, timeout=900)
    rows = list(csv.DictReader(open(out / (log.stem + ".csv"))))
    return {k for k, v in rows[0].items() if v == "True"}


def main() -> int:
    import darshan

    python = sys.argv[1]
    logs = sorted((Path(darshan.__file__).parent / "examples" / "example_logs").glob("*.darshan"))
    print("| log | both | Drishti only | iotuner only |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for log in logs:
            d = drishti_codes(python, log, Path(tmp)) - INFO_ONLY
            adv = json.loads(
                subprocess.run(
                    [sys.executable, "-m", "iotuner", "advise", str(log), "--json"], capture_output=True, text=True
                ).stdout
            )
            ours = {f["code"] for f in adv["findings"] if not f["code"].startswith("smartio-")}
            mapped = {c: DRISHTI_TO_IOTUNER.get(c, "?") for c in d}
            both = sorted(f"{c}={m}" for c, m in mapped.items() if m in ours)
            only_d = sorted(f"{c}" for c, m in mapped.items() if m not in ours)
            only_i = sorted(ours - set(mapped.values()))
            print(
                f"| {log.name[:28]} | {', '.join(both) or '-'} | {', '.join(only_d) or '-'} | "
                f"{', '.join(only_i) or '-'} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
