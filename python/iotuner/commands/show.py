"""iotuner show: the tables of a saved run report."""

from __future__ import annotations

import argparse
import sys

ORDER = 40
HELP = "print the tables of a saved run report"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("report", metavar="REPORT")


def main(args: argparse.Namespace) -> int:
    from .. import render, report
    try:
        rep = report.load(args.report)
    except report.ReportError as e:
        print(f"iotuner show: {e}", file=sys.stderr)
        return 1
    console = render.console_for_output()
    render.print_report(rep, console)
    if rep.data.get("smart"):
        from .. import smart
        smart.print_summary(console, rep)
    return 0
