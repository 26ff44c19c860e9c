#!/usr/bin/env python3
"""I/O kernels (`iotuner kernel`) measured against their applications, in one run.

For each multi-file test application (tests/programs/kernel_app: HDF5, file
per step; kernel_mpiio: MPI-IO dumps and a read-back; kernel_solver: a Jacobi
solver whose field is written, without the compute (the default) and with it
(--keep-compute)), the kernel is extracted,
built and validated: application and kernel run alternately (--repeats), and
the figures of the paper's Fig. 8c are printed beside the evaluation times:
the error of bytes written and of I/O calls, without loop reduction (the
kernel run whole) and with it (the reduced kernel's figures times each
phase's loop factor). Run it under the timing lock:

    flock /tmp/iotuner-timing.lock .venv/bin/python bench/kernel.py
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from iotuner.kernel import discover

ROOT = Path(__file__).resolve().parents[1]
# (label, application, its arguments, a loop fraction, keep the compute); "mpiio every 5" dumps every 5
# steps, so the 3 iterations the reduced kernel runs do not hold a whole period: its scaled figures are off.
# {params} is a file holding SOLVER_PARAMS (kernel_solver reads NX NY SWEEPS OUTPUTS from it).
APPS = [
    ("kernel_app", "kernel_app", ["{scratch}", "8", "65536", "150"], 0.25, False),
    ("kernel_mpiio", "kernel_mpiio", ["{scratch}", "24", "3", "20000", "2000"], 0.125, False),
    ("mpiio every 5", "kernel_mpiio", ["{scratch}", "24", "5", "20000", "2000"], 0.125, False),
    ("solver", "kernel_solver", ["{params}", "{scratch}"], 0.25, False),
    ("solver, kept", "kernel_solver", ["{params}", "{scratch}"], 0.25, True),
]
SOLVER_PARAMS = "256 256 6000 4\n"


def build(name: str, out: Path) -> tuple[list[Path], Path]:
    def pc(what):
        return subprocess.run(
            ["pkg-config", what, "hdf5-mpich"], check=True, capture_output=True, text=True
        ).stdout.split()

    sources = sorted((ROOT / "tests" / "programs" / name).glob("*.c"))
    exe = out / name
    subprocess.run(
        ["mpicc.mpich", "-O2", *pc("--cflags"), *map(str, sources), "-o", str(exe), *pc("--libs"), "-lm"], check=True
    )
    return sources, exe


def pct(x) -> str:
    return "n/a" if x is None else f"{x:.3g}%"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5, help="alternated runs of application and kernel (default 5)")
    ap.add_argument("--only", metavar="TEXT", help="only the applications whose label contains TEXT")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="iotuner-bench-kernel-") as tmp:
        tmp = Path(tmp)
        built = {}
        params = tmp / "params.txt"
        params.write_text(SOLVER_PARAMS)
        for i, (label, name, app_args, fraction, keep) in enumerate(APPS):
            if args.only and args.only not in label:
                continue
            app_args = [a.replace("{params}", str(params)) for a in app_args]
            if name not in built:
                built[name] = build(name, tmp)
            sources, exe = built[name]
            for f in (1.0, fraction):
                print(f"{label}: loop fraction {f:g} ...", file=sys.stderr)
                k = discover.discover_io(
                    discover.Options(
                        sources,
                        tmp / f"{i}-{f:g}",
                        app_command=[str(exe), *app_args],
                        cwd=tmp,
                        loop_fraction=f,
                        keep_compute=keep,
                        repeats=args.repeats,
                    )
                )
                v = k.validation
                if not k.usable:
                    rows.append((label, f, f"not usable: {k.reason}"))
                    continue
                t = v["totals"]
                figs = {"bytes_whole": pct(t["written"]["error_pct"]), "calls_whole": pct(t["calls"]["error_pct"])}
                if "reduction" in v:
                    p = v["reduction"]["prediction"]
                    figs.update(
                        bytes_reduced=pct(p["written"]["error_pct"]),
                        calls_reduced=pct(p["calls"]["error_pct"]),
                        scale=f"{k.scale:.3g}",
                    )
                rows.append((label, f, figs, v["app"], v["kernel"], v["speedup"], v["speedup_min"], v["console_lines"]))
    print(
        f"{'application':14s} {'fraction':>8s} {'app s (median)':>14s} {'kernel s':>9s} {'speedup':>8s} "
        f"{'(fastest)':>9s}  Fig. 8c figures"
    )
    for row in rows:
        if len(row) == 3:
            print(f"{row[0]:14s} {row[1]:8g}  {row[2]}")
            continue
        name, f, figs, ta, tk, sp, spm, cl = row
        extra = ", ".join(f"{k} {v}" for k, v in figs.items())
        print(
            f"{name:14s} {f:8g} {ta['median_s']:14.3f} {tk['median_s']:9.3f} {sp:7.1f}x {spm:8.1f}x  {extra}; "
            f"console lines {cl['app']} -> {cl['kernel']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
