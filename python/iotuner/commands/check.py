"""iotuner check: validate a settings document."""

from __future__ import annotations

import argparse
import json
import sys

ORDER = 50
HELP = (
    "validate a settings document and print it normalized; warn about near misses of known knobs and "
    "legal values that would cost dearly"
)
DESCRIPTION = (
    "Validate a settings document with the runtime's own validator (the C core libiotuner.so uses), "
    "so a document that passes is one the runtime applies: every problem is named with its line "
    '(unknown knob, wrong type, out of range, an ambiguous unit such as "4MB", a key given twice). '
    "A valid document is printed normalized (bytes, integers, lower-case choices, every knob in a "
    "group); MPI-IO hints outside the catalogue that look like a known one's typo get a warning on "
    "stderr."
)
EPILOG = (
    "examples:\n  iotuner check tuned.json\n  iotuner check best.json > normalized.json\n\n"
    "exit status: 0 valid, 1 rejected (the reason on stderr), 2 the file cannot be read"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("settings", metavar="SETTINGS", help="a settings document (JSON; docs/settings.md)")


def main(args: argparse.Namespace) -> int:
    from .. import settings

    try:
        doc, warnings = settings.check(args.settings)  # a file that is no settings document at all: exit 2 (cli)
    except settings.SettingsError as e:
        print(f"iotuner check: {e}", file=sys.stderr)
        return 1
    for warning in warnings:
        print(f"iotuner check: warning: {warning}", file=sys.stderr)
    print(json.dumps(doc, indent=2))
    return 0
