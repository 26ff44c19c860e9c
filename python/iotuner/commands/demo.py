"""iotuner demo: the main job of `make demo`, a real tuning of a bundled kernel."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ORDER = 90
HELP = "tune a bundled kernel on this machine (about 30 seconds)"
DESCRIPTION = (
    "Tune the bundled IOR-like kernel h5ior (2 ranks, 64 MiB each, 1 MiB collective transfers) from "
    "baseline settings that force ROMIO's collective buffering through one aggregator: trials in the "
    "'romio' space, then a confirmation of the best against the baseline, interleaved. The results "
    "(best.json, trials.csv, curve.png, summary.json, report.html) go to --out."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trials", type=int, default=20, help="trials (default 20)")
    p.add_argument(
        "--out",
        default="iotuner-demo",
        help="where the results go (default ./iotuner-demo): a new or empty directory, or an earlier "
        "demo or tune output (with its summary.json), which is replaced",
    )


def main(args: argparse.Namespace) -> int:
    from .. import cli, native, settings

    out = Path(args.out).resolve()
    if out.exists():  # the demo starts afresh, but only ever replaces an earlier result
        if not out.is_dir() or (any(out.iterdir()) and not (out / "summary.json").is_file()):
            print(
                f"iotuner demo: {out} exists and is not an earlier demo or tune output (no summary.json): "
                f"it is left alone. Give --out a new or empty directory.",
                file=sys.stderr,
            )
            return 2
        shutil.rmtree(out)
    out.mkdir(parents=True)
    baseline = settings.save(
        {
            "version": 1,
            "description": "ROMIO forced to collective buffering on one aggregator",
            "mpiio": {"romio_cb_write": "enable"},
        },
        out / "baseline.json",
    )
    shm = Path("/dev/shm")
    scratch_root = shm if shm.is_dir() and os.access(shm, os.W_OK) else None  # steadier than disk here
    print(
        "iotuner demo: tuning the IOR-like kernel h5ior (2 ranks, 64 MiB each, 1 MiB collective transfers).\n"
        "Its baseline settings force ROMIO's collective buffering through one aggregator; the tuner searches\n"
        f"the 'romio' space for {args.trials} trials, then confirms the best against the baseline.\n",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="iotuner-demo-", dir=scratch_root) as scratch:
        argv = [
            "tune",
            "--baseline",
            str(baseline),
            "--space",
            "romio",
            "--strategy",
            "bayes",
            "--trials",
            str(args.trials),
            "--objective",
            "write-bw",
            "--study",
            "demo",
            "--out",
            str(out),
            "--scratch",
            scratch,
            "--",
            str(native.executable("h5ior")),
            "-b",
            "64M",
            "-t",
            "1M",
            "-o",
            "{scratch}",
        ]
        return cli.main(argv)
