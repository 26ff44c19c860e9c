"""iotuner kernels: the bundled I/O kernels."""

from __future__ import annotations

import argparse
import sys

ORDER = 80
HELP = "list the bundled I/O kernels: what each models, and where it is"
DESCRIPTION = """\
The bundled I/O kernels: small MPI + parallel HDF5 programs with the I/O pattern of HPC applications
(kernels/README.md). Installed, they are on your PATH as iotuner-<kernel> (iotuner-vpicio, ...), next to
iotuner itself. Jobs that iotuner runs also find them by their short names ('iotuner run -- mpiexec -n 2
h5ior -b 16M'); '--path' prints the directory that holds those names, for your own scripts. A kernel's '-h'
prints its options."""
EPILOG = """\
examples:
  mpiexec -n 2 iotuner-vpicio -n 64K -o out
  PATH=$(iotuner kernels --path):$PATH mpiexec -n 2 vpicio -n 64K -o out"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--json", action="store_true", help="a JSON list of {name, path, description}")
    what.add_argument("--path", action="store_true", help="print only the directory of the kernels' short names")


def main(args: argparse.Namespace) -> int:
    from .. import native
    try:
        d = native.programs_dir()
        names = native.bundled_kernels()
    except native.NativeMissing as e:
        print(f"iotuner kernels: {e}", file=sys.stderr)
        return 2
    if args.path:
        print(d)
        return 0
    rows = [{"name": n, "path": str(d / n), "description": native.KERNELS[n]} for n in names]
    if args.json:
        import json
        print(json.dumps(rows, indent=2))
        return 0
    import textwrap
    from ..terminal import width
    columns = width(sys.stdout)
    for r in rows:
        print(textwrap.fill(r["description"], columns, initial_indent=f"{r['name']:9s} ", subsequent_indent=" " * 10))
    print(textwrap.fill(f"(on your PATH as iotuner-<name>; jobs that iotuner runs find them by name in {d})",
                        columns, break_long_words=False, break_on_hyphens=False))
    return 0
