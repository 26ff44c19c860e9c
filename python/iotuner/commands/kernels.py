"""iotuner kernels: the bundled I/O kernels."""

from __future__ import annotations

import argparse
import sys

ORDER = 80
HELP = "list the bundled I/O kernels: what each models, and where it is"
DESCRIPTION = """\
The bundled I/O kernels: small MPI programs (parallel HDF5, PnetCDF, netCDF-4) with the I/O pattern of HPC
applications (kernels/README.md), built with each MPI the installation has a runtime for. Installed, they are on
your PATH as iotuner-<kernel> (iotuner-vpicio, ...), next to
iotuner itself. Jobs that iotuner runs also find them by their short names ('iotuner run -- mpiexec -n 2
h5ior -b 16M'); '--path' prints the directory that holds those names, for your own scripts. A kernel's '-h'
prints its options."""
EPILOG = """\
examples:
  mpiexec -n 2 iotuner-vpicio -n 64K -o out
  PATH=$(iotuner kernels --path):$PATH mpiexec -n 2 vpicio -n 64K -o out"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--json", action="store_true", help="a JSON list of {name, path, mpi, description}")
    what.add_argument("--path", action="store_true", help="print only the directory of the kernels' short names")


def main(args: argparse.Namespace) -> int:
    from .. import native

    try:
        d = native.programs_dir()
        sets = native.kernel_sets()
    except native.NativeMissing as e:
        print(f"iotuner kernels: {e}", file=sys.stderr)
        return 2
    if args.path:
        print(d)
        return 0
    rows = [
        {
            "name": n,
            "path": str(native.programs_dir(abi or None) / n),
            "mpi": abi or None,
            "description": native.KERNELS[n],
        }
        for abi, names in sets.items()
        for n in names
    ]
    if args.json:
        import json

        print(json.dumps(rows, indent=2))
        return 0
    import textwrap

    from ..terminal import width

    columns = width(sys.stdout)
    main_abi = next(iter(sets))
    for abi, names in sets.items():
        if abi != main_abi:
            where = native.programs_dir(abi)
            print(
                textwrap.fill(
                    f"built with {abi} (its jobs, e.g. 'iotuner run -- mpirun.{abi} -n 2 h5ior', find "
                    f"these by name first, in {where}):",
                    columns,
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
        for n in names:
            print(textwrap.fill(native.KERNELS[n], columns, initial_indent=f"{n:11s} ", subsequent_indent=" " * 12))
        if abi == main_abi:
            print(
                textwrap.fill(
                    f"(on your PATH as iotuner-<name>; jobs that iotuner runs find them by name in {d})",
                    columns,
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
    return 0
