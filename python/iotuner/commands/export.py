"""iotuner export: a settings document as hints other tools read (for sites that will not LD_PRELOAD)."""

from __future__ import annotations

import argparse
import sys

ORDER = 62
HELP = "write a settings document (e.g. a tuned best.json) as a ROMIO_HINTS file, MPICH_MPIIO_HINTS or H5Tuner XML"
DESCRIPTION = ("Write the settings a tuning found in a form the site's MPI or H5Tuner reads without iotuner: "
               "romio-hints (a file for ROMIO_HINTS: the MPI-IO hints for every file), mpich-mpiio-hints (a "
               "value for Cray MPICH's MPICH_MPIIO_HINTS: hints per file-name pattern) or h5tuner-xml (an "
               "H5Tuner control file: alignment, sieve buffer, chunking and four MPI-IO hints). Every setting "
               "the format cannot hold is listed on stderr, never dropped silently; exit status 1 then.")
EPILOG = ("examples:\n  iotuner export out/best.json --to romio-hints -o romio_hints && "
          "export ROMIO_HINTS=$PWD/romio_hints\n"
          "  export MPICH_MPIIO_HINTS=$(iotuner export out/best.json --to mpich-mpiio-hints)\n"
          "exit status: 0 everything exported, 1 some settings left out (listed), 2 bad input")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..hints import FORMATS
    p.add_argument("settings", metavar="SETTINGS", help="a settings document (best.json of iotuner tune, ...)")
    p.add_argument("--to", required=True, choices=FORMATS, help="the format to write")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


def main(args: argparse.Namespace) -> int:
    from .. import files, hints, settings
    try:
        doc = settings.load(args.settings)
    except settings.SettingsError as e:
        print(f"iotuner export: {e}", file=sys.stderr)
        return 2
    out = hints.export(doc, args.to)
    if args.output:
        files.write_atomic(args.output, out.text)
    else:
        sys.stdout.write(out.text)
    for item in out.left_out:
        print(f"iotuner export: not in {args.to}: {item}", file=sys.stderr)
    return 1 if out.left_out else 0
