"""iotuner export: a settings document as hints other tools read (for sites that will not LD_PRELOAD)."""

from __future__ import annotations

import argparse
import sys

ORDER = 62
HELP = (
    "write a settings document (e.g. a tuned best.json) as a ROMIO_HINTS file, MPICH_MPIIO_HINTS, H5Tuner XML "
    "or PNETCDF_HINTS"
)
DESCRIPTION = (
    "Write the settings a tuning found in a form the site's MPI or H5Tuner reads without iotuner: "
    "romio-hints (a file for ROMIO_HINTS: the MPI-IO hints for every file), mpich-mpiio-hints (a "
    "value for Cray MPICH's MPICH_MPIIO_HINTS: hints per file-name pattern), h5tuner-xml (an "
    "H5Tuner control file: alignment, sieve buffer, chunking and four MPI-IO hints) or pnetcdf-hints (a value "
    "for PNETCDF_HINTS: the PnetCDF hints, and the MPI-IO hints PnetCDF passes on, for every file it "
    "opens). Every setting "
    "the format cannot hold is listed on stderr, never dropped silently; the rest is written, and "
    "that is a success unless --strict."
)
EPILOG = (
    "examples:\n"
    "  iotuner export best.json --to romio-hints -o romio_hints &&\n"
    "      export ROMIO_HINTS=$PWD/romio_hints\n"
    "  export MPICH_MPIIO_HINTS=$(iotuner export best.json --to mpich-mpiio-hints)\n"
    "  export PNETCDF_HINTS=$(iotuner export best.json --to pnetcdf-hints)\n"
    "\n"
    "exit status: 0 written (settings the format cannot hold listed on stderr), 1 with --strict: some "
    "settings left out (nothing written), 2 bad input"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..hints import FORMATS

    p.add_argument("settings", metavar="SETTINGS", help="a settings document (best.json of iotuner tune, ...)")
    p.add_argument("--to", required=True, choices=FORMATS, help="the format to write")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p.add_argument(
        "--strict", action="store_true", help="a setting the format cannot hold is an error: write nothing, exit 1"
    )


def main(args: argparse.Namespace) -> int:
    from .. import files, hints, settings

    try:
        doc = settings.load(args.settings)
    except settings.SettingsError as e:
        print(f"iotuner export: {e}", file=sys.stderr)
        return 2
    out = hints.export(doc, args.to)
    for item in out.left_out:
        print(f"iotuner export: not in {args.to}: {item}", file=sys.stderr)
    if out.left_out and args.strict:
        print(
            f"iotuner export: --strict: {len(out.left_out)} setting(s) cannot be written as {args.to}; nothing written",
            file=sys.stderr,
        )
        return 1
    if args.output:
        files.write_atomic(args.output, out.text)
    else:
        sys.stdout.write(out.text)
    return 0
