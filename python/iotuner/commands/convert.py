"""iotuner convert: an H5Tuner XML control file to a settings document."""

from __future__ import annotations

import argparse
import json
import sys

ORDER = 60
HELP = "turn an H5Tuner XML control file into a settings document"
DESCRIPTION = ("Convert an H5Tuner XML control file (sieve_buf_size, alignment, chunk, cb_buffer_size, cb_nodes, "
               "striping_factor, striping_unit, ... with optional FileName / VariableName attributes) into an "
               "iotuner settings document.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("xml", metavar="H5TUNER.xml")
    p.add_argument("-o", "--output", metavar="FILE", help="write the document here instead of stdout")


def main(args: argparse.Namespace) -> int:
    from .. import h5tuner, settings
    try:
        conv = h5tuner.convert_file(args.xml)
    except h5tuner.ConversionError as e:
        print(f"iotuner convert: {e}", file=sys.stderr)
        return 1
    for note in conv.notes:
        print(f"iotuner convert: note: {note}", file=sys.stderr)
    if args.output:
        settings.save(conv.document, args.output)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(json.dumps(conv.document, indent=2))
    return 0
