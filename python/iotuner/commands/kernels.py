"""iotuner kernels: the bundled I/O kernels."""

from __future__ import annotations

import argparse
import sys

ORDER = 80
HELP = "list the bundled I/O kernels: what each models, and where it is"
DESCRIPTION = ("The bundled I/O kernels: small MPI + parallel HDF5 programs with the I/O pattern of HPC "
               "applications (kernels/README.md). They are on the PATH of every job iotuner starts, so "
               "'iotuner run -- mpiexec -n 2 h5ior -b 16M' finds them by name; '-h' prints a kernel's options.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="a JSON list of {name, path, description}")


def main(args: argparse.Namespace) -> int:
    from .. import native
    try:
        d = native.native_dir() / "bin"
        names = native.bundled_kernels()
    except native.NativeMissing as e:
        print(f"iotuner kernels: {e}", file=sys.stderr)
        return 2
    rows = [{"name": n, "path": str(d / n), "description": native.KERNELS[n]} for n in names]
    if args.json:
        import json
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        print(f"{r['name']:9s} {r['description']}")
    print(f"(in {d}; on the PATH of jobs that iotuner runs)")
    return 0
