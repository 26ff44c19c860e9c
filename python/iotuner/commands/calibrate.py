"""iotuner calibrate: learn this machine's operation costs for the hybrid model (strategy `hybrid`)."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ORDER = 45
HELP = "measure this machine's MPI and file operation costs for the hybrid model and the simulator (about 35 s here)"
DESCRIPTION = """Runs application-independent micro-benchmarks (MPI collectives over message sizes, point-to-point
exchanges, file writes and reads of 4 KiB-16 MiB by 1..ranks concurrent writers, to a new file and in steady
state, with and without fdatasync), fits one surrogate per operation (k-nearest neighbours, SVR with an RBF
kernel, random forest; chosen by 5-fold cross-validation) and stores them in this machine's calibration file,
which every `--strategy hybrid` study on the machine reuses. Prints each surrogate's cross-validated R-squared
and RMSE (as Isaila et al., Cluster'15, Table II)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ranks", type=int, default=2, help="MPI ranks (and most concurrent writers); default 2")
    p.add_argument(
        "--launcher",
        default=None,
        help="MPI launcher command, the rank count appended as -n N (default: mpiexec.mpich or mpiexec)",
    )
    p.add_argument(
        "--dir", default=".", help="directory on the file system the applications write to (default: the current one)"
    )
    p.add_argument(
        "--passes",
        type=int,
        default=3,
        help="times the benchmark suite runs; each pass gives one point per operation and size (default 3)",
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        default=16 << 20,
        help="largest message (collectives' too) and file write measured (default 16 MiB)",
    )
    p.add_argument(
        "--output",
        metavar="FILE",
        help="calibration file (default: $IOTUNER_CALIBRATION, else ~/.cache/iotuner/calibration-HOST.json)",
    )
    p.add_argument(
        "--from-measurements",
        metavar="FILE",
        help="refit from an earlier calibration file's measurements instead of running the benchmarks",
    )


def measure(launcher: list[str], ranks: int, directory: Path, passes: int, max_bytes: int) -> list[dict]:
    from .. import native

    exe = native.executable("iotuner-microbench")
    records = []
    for k in range(passes):
        print(f"  pass {k + 1}/{passes} ...", end="", flush=True)
        t0 = time.monotonic()
        proc = subprocess.run(
            launcher + ["-n", str(ranks), str(exe), "--dir", str(directory), "--max-bytes", str(max_bytes)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"the micro-benchmark failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
        got = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        for r in got:
            r["pass"] = k
        records += got
        print(f" {len(got)} measurements in {time.monotonic() - t0:.1f} s", flush=True)
    return records


def table(cal) -> str:
    lines = [
        f"{'surrogate':10s} {'learner':14s} {'points':>6s} {'R2 (CV)':>8s} {'RMSE (s, CV)':>13s} {'RMSE log10':>10s}"
    ]
    for name, s in cal.surrogates.items():
        lines.append(
            f"{name:10s} {s.learner:14s} {s.points:6d} {s.cv_r2:8.3f} {s.cv_rmse_s:13.3e} {s.cv_rmse_log10:10.3f}"
        )
    return "\n".join(lines)


POOR_FIT = 0.9  # cross-validated R2 below this: the surrogate's predictions are rough


def fit_warning(cal) -> str | None:
    """One line naming the surrogates whose cross-validated fit is poor (None: every one fits), since
    `tune --strategy auto`, hybrid and `simulate` predict with them."""
    poor = [(name, s.cv_r2) for name, s in cal.surrogates.items() if s.cv_r2 < POOR_FIT]
    if not poor:
        return None
    named = ", ".join(f"{name} (R2 {r2:.2f})" for name, r2 in poor)
    return (
        f"warning: {len(poor)} of {len(cal.surrogates)} surrogates fit poorly (cross-validated R2 below "
        f"{POOR_FIT}): {named}; tune's auto and hybrid strategies and simulate predict those operations "
        f"roughly. More --passes, or a quieter machine, give them more and steadier points"
    )


def _unwritable(out: Path) -> str | None:
    from ..destinations import why_unwritable

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return f"cannot make its directory ({e.strerror or e})"
    return None if out.is_symlink() else why_unwritable(out)  # a link is replaced, as any earlier file


def main(args: argparse.Namespace) -> int:
    from ..perfmodel import calibration

    out = Path(args.output) if args.output else calibration.default_path()
    why = _unwritable(out)
    if why:  # said before the benchmarks run, not after them
        print(f"iotuner calibrate: cannot write the calibration to {out}: {why}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    if args.from_measurements:
        try:
            records, _ = calibration.measurements(Path(args.from_measurements))  # the surrogates are refitted
        except calibration.CalibrationError as e:
            print(f"iotuner calibrate: {e}", file=sys.stderr)
            return 2
        meta = {}
    else:
        directory = Path(args.dir).resolve()
        if not directory.is_dir():
            print(f"iotuner calibrate: --dir {directory} is not a directory", file=sys.stderr)
            return 2
        launcher = shlex.split(args.launcher) if args.launcher else [shutil.which("mpiexec.mpich") or "mpiexec"]
        print(f"iotuner calibrate: micro-benchmarks on {args.ranks} ranks, files in {directory}")
        try:
            records = measure(launcher, args.ranks, directory, max(1, args.passes), args.max_bytes)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            print(f"iotuner calibrate: {e}", file=sys.stderr)
            return 1
        meta = {"ranks": args.ranks, "dir": str(directory)}
    print("iotuner calibrate: fitting one surrogate per operation (kNN, SVR-RBF, random forest; 5-fold CV)")
    try:
        cal = calibration.build(records, meta)
    except calibration.CalibrationError as e:
        print(f"iotuner calibrate: {e}", file=sys.stderr)
        return 1
    print(table(cal))
    warning = fit_warning(cal)
    if warning:
        print(warning)
    cal.save(out)
    print(f"iotuner calibrate: wrote {out} ({time.monotonic() - t0:.0f} s)")
    return 0
