"""iotuner convert: hints files of other tools to a settings document."""

from __future__ import annotations

import argparse
import json
import sys

ORDER = 60
HELP = "turn an H5Tuner XML file, a ROMIO_HINTS file or an MPICH_MPIIO_HINTS string into a settings document"
DESCRIPTION = (
    "Convert hints written for other tools into an iotuner settings document: an H5Tuner XML control "
    "file (sieve_buf_size, alignment, chunk, cb_buffer_size, cb_nodes, striping_factor, striping_unit, "
    "... with optional FileName / VariableName attributes; read in the encoding its XML declaration "
    "names), a ROMIO_HINTS file ('key value' lines) or a Cray MPICH_MPIIO_HINTS string "
    "('pattern:key=value:...,pattern:...'). The format is recognised from the content; --from "
    "names it. 'iotuner export' goes the other way."
)
EPILOG = (
    "examples:\n  iotuner convert h5tuner.xml -o tuned.json\n  iotuner convert $ROMIO_HINTS\n"
    '  iotuner convert --mpich-mpiio-hints "$MPICH_MPIIO_HINTS"'
)
FORMATS = ("h5tuner-xml", "romio-hints", "mpich-mpiio-hints")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "input",
        nargs="?",
        metavar="FILE",
        help="an H5Tuner XML file, a ROMIO_HINTS file, or a file holding an MPICH_MPIIO_HINTS string",
    )
    p.add_argument("--mpich-mpiio-hints", metavar="STRING", help="convert this MPICH_MPIIO_HINTS value")
    p.add_argument("--from", dest="fmt", choices=FORMATS, help="the input's format (default: recognised)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the document here instead of stdout")


def main(args: argparse.Namespace) -> int:
    from .. import h5tuner, hints, inputs, settings

    if (args.input is None) == (args.mpich_mpiio_hints is None):
        print("iotuner convert: give one FILE or --mpich-mpiio-hints STRING", file=sys.stderr)
        return 2
    notes: list[str] = []
    try:
        if args.mpich_mpiio_hints is not None:
            doc = hints.from_mpich_mpiio_hints(args.mpich_mpiio_hints)
        else:
            data = inputs.read_bytes(args.input, "a hints file (H5Tuner XML, ROMIO_HINTS, MPICH_MPIIO_HINTS)")
            fmt = args.fmt or ("h5tuner-xml" if data.lstrip()[:1] == b"<" else None)
            if fmt == "h5tuner-xml":
                conv = h5tuner.convert_text(data, args.input)
                doc, notes = conv.document, conv.notes
            else:
                text = inputs.read_text(args.input, "a ROMIO_HINTS file or an MPICH_MPIIO_HINTS string")
                if fmt is None:
                    fmt = "mpich-mpiio-hints" if hints.looks_like_mpich_mpiio_hints(text) else "romio-hints"
                doc = (
                    hints.from_mpich_mpiio_hints(text, args.input)
                    if fmt == "mpich-mpiio-hints"
                    else hints.from_romio_hints(text, args.input)
                )
    except (h5tuner.ConversionError, hints.HintsError) as e:
        print(f"iotuner convert: {e}", file=sys.stderr)
        return 1
    for note in notes:
        print(f"iotuner convert: note: {note}", file=sys.stderr)
    if args.output:
        settings.save(doc, args.output)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(json.dumps(doc, indent=2))
    return 0
