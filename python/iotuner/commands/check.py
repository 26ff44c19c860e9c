"""iotuner check: validate a settings document."""

from __future__ import annotations

import argparse
import json
import sys

ORDER = 50
HELP = ("validate a settings document and print it normalized; warn about near misses of known knobs and "
        "legal values that would cost dearly")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("settings", metavar="SETTINGS")


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
