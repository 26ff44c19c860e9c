"""iotuner smart: SmartIO's tuning during one run."""

from __future__ import annotations

import argparse
import sys

ORDER = 30
HELP = "run with SmartIO's runtime tuning: learn the first phase, optimize the ones that recur"
DESCRIPTION = (
    "Run an application with smart mode on: libiotuner.so predicts each file phase's I/O calls "
    "(a Sequitur grammar per rank), learns the first phase of every file name (numbers "
    "normalized: chk_0001.h5 and chk_0002.h5 are one), extracts insights (collective or "
    "independent, transfer size, locality, shared file or one per process, file system) and "
    "applies SmartIO's rules to the phases that recur. A feedback loop judges the phases that "
    "run under the rules: two in a row slower than the reference beyond the margin "
    "(IOTUNER_SMART_MARGIN, default 0.25) make the next phase a probe with the default settings; "
    "if the probe is faster, each rule is tried alone and the ones that hurt are rolled back. "
    "With --explain, prints the insights -> rules -> settings chain of a saved report, re-running "
    "the same rules."
)
EPILOG = (
    "examples:\n  iotuner smart --verbose -- mpiexec -n 2 flashio -t 7\n"
    "  iotuner smart --report run.json -- srun -n 64 ./app\n  iotuner smart --explain run.json"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verbose", action="store_true", help="rank 0 logs every phase's decisions on stderr")
    p.add_argument("--report", metavar="FILE", help="keep the run report (JSON) in FILE")
    p.add_argument("--explain", metavar="REPORT", help="explain the decisions recorded in a run report")
    p.add_argument("--rules", metavar="FILE", help=argparse.SUPPRESS)  # tests: a replacement rules table
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- LAUNCHER APP ARGS")


def main(args: argparse.Namespace) -> int:
    from .. import inputs, render, smart_mode

    console = render.console_for_output()
    if args.explain:
        table = inputs.read_text(args.rules, "a rules table (JSON)") if args.rules else None
        return smart_mode.explain(args.explain, console, table)
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    if not command:
        print("iotuner smart: give the command to run after --, or --explain REPORT", file=sys.stderr)
        return 2
    from .. import mpiabi

    if (found := mpiabi.mismatch(command)) is not None:  # nothing runs: every rank would be rank 0 of its own
        print(f"iotuner smart: {mpiabi.mismatch_message(found)}", file=sys.stderr)
        return 2
    return smart_mode.run(
        command, report_path=args.report, verbose=args.verbose, rules_table=args.rules, console=console
    )
