"""iotuner report: a self-contained HTML page of a study, a run or an advice."""

from __future__ import annotations

import argparse
import sys

ORDER = 45
HELP = "write a self-contained HTML page of a tune directory, a run report or an advice file"
DESCRIPTION = (
    "Write one HTML file (inline CSS and SVG charts, no network, readable without JavaScript) of: a tune "
    "output directory (tuning curve with the default, RoTI, trial table, parameter importance, "
    "verdict); a run report (phases per file with bandwidth, settings requested / effective / dropped; "
    "in smart mode the insights -> rules -> settings chain and the feedback); or an advice file from "
    "'iotuner advise --json' (findings by level with their evidence)."
)
EPILOG = (
    "examples:\n  iotuner report iotuner-demo -o study.html\n  iotuner report run.json -o run.html\n"
    "  iotuner advise job.darshan --json > advice.json\n  iotuner report advice.json -o advice.html"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help="tune output directory, run report, or advice JSON")
    p.add_argument("-o", "--output", metavar="FILE", default="report.html", help="the page (default report.html)")


def main(args: argparse.Namespace) -> int:
    from ..htmlreport import ReportInputError, render, write

    try:
        html, kind = render(args.path)
    except ReportInputError as e:
        print(f"iotuner report: {e}", file=sys.stderr)
        return 2
    write(html, args.output)
    print(f"wrote {args.output} ({kind} page, {len(html) / 1024:.0f} KiB)")
    return 0
