"""iotuner link-flags: what to add to the link line of a program with HDF5 linked in statically."""

from __future__ import annotations

import argparse
import sys

NAME = "link-flags"
ORDER = 85
HELP = "print the link flags that let iotuner see a program with HDF5 linked in statically"
DESCRIPTION = """\
h5pcc and h5pfc link HDF5 statically into the program by default (so do many site builds): a preloaded
library then never sees an HDF5 call, and every hdf5 knob of a run report is 'cannot apply'. Add what this
prints to the program's link line, as darshan-config --pre-ld-flags is added: ld's --wrap for each HDF5 call
iotuner intercepts, and libiotuner_link.a, which sends the calls to iotuner's wrappers when 'iotuner run'
preloads the runtime, and straight to HDF5 otherwise (the program runs as before without iotuner)."""
EPILOG = """\
examples:
  h5pcc $(iotuner link-flags) app.c -o app
  h5pfc $(iotuner link-flags) app.f90 -o app
  iotuner run --config tuned.json -- mpiexec -n 2 ./app
  h5pfc.openmpi $(iotuner link-flags --mpi openmpi) app.f90 -o app"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--mpi",
        choices=("mpich", "openmpi"),
        help="the MPI the program is built with (default: the one of the main runtime build)",
    )


def flags(abi: str | None = None) -> list[str]:
    """The link flags, for the runtime build of this MPI ABI (None: the main one)."""
    from .. import native

    lib = native.runtime_library(abi).parent
    if abi is not None and native.library_abi(lib / "libiotuner.so") != abi:
        raise native.NativeMissing(
            f"this iotuner has no runtime built for {abi} (it has: {', '.join(native.runtime_abis()) or 'none'})"
        )
    wrap = native.lib_dir() / "libiotuner_link.wrap"
    if not (lib / "libiotuner_link.a").exists() or not wrap.exists():
        raise native.NativeMissing(f"libiotuner_link.a is missing from {lib}; rebuild iotuner ('make build')")
    return (
        [f"-Wl,{option}" for option in wrap.read_text().split()]
        # the archive's member is linked wherever the flags stand on the line (before the program's objects)
        + ["-Wl,--undefined=iotuner_link_hdf5", f"-L{lib}", "-liotuner_link"]
    )


def main(args: argparse.Namespace) -> int:
    from .. import native

    try:
        print(" ".join(flags(args.mpi)))
    except native.NativeMissing as e:
        print(f"iotuner link-flags: {e}", file=sys.stderr)
        return 2
    return 0
