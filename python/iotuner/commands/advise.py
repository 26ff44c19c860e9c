"""iotuner advise: findings and a settings document from a Darshan log or a run report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ORDER = 35
HELP = "diagnose a Darshan log or a run report: findings, SmartIO's rules, the model's predictions, ranked fixes"
DESCRIPTION = (
    "Read a Darshan log (PyDarshan; DXT traces used when present) or an iotuner run report and report "
    "findings, each with a code, a level (high, warn, info, ok), the evidence, the files and a "
    "recommendation: checks known from Drishti and iotuner's own, plus SmartIO's rules applied to the "
    "insights of each file (the C core's rules table, as smart mode uses it), plus, for a run report, the "
    "performance model's predictions of other MPI-IO hints and HDF5 transfer modes, priced by this machine's "
    "calibration ('iotuner calibrate', once per machine). They are reconciled into ranked recommendations, "
    "each with its predicted effect, confidence and evidence; the first one's settings document (-o) is for "
    "'iotuner run --config' or 'iotuner tune --baseline'. Fixes that need code changes are listed apart."
)
EPILOG = (
    "exit status: 0 no high finding, 1 at least one high finding, 2 the input cannot be read (missing, "
    "corrupt, truncated, unsupported version), 3 a bad --thresholds or --calibration file or PyDarshan "
    "missing.\n\n"
    "examples:\n  iotuner advise job.darshan -o fixes.json\n"
    "  iotuner advise run.json --json > advice.json\n"
    "  iotuner advise job.darshan --thresholds strict.json --html advice.html"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="INPUT", help="a Darshan log (.darshan) or an iotuner run report (JSON)")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the settings document of the first recommendation here (and an HTML page next to it)",
    )
    p.add_argument("--json", action="store_true", help="print the advice as JSON (for scripts and 'iotuner report')")
    p.add_argument("--html", metavar="FILE", help="write the advice as a self-contained HTML page")
    p.add_argument(
        "--thresholds",
        metavar="FILE",
        help='JSON object of thresholds to override, e.g. {"small_fraction": 0.2} (names: docs/advise.md)',
    )
    p.add_argument("--nodes", type=int, metavar="N", help="nodes of the job, when the input does not say")
    p.add_argument(
        "--calibration",
        metavar="FILE",
        help="the calibration that prices the model's predictions (default: this machine's, from 'iotuner calibrate')",
    )
    p.add_argument("--verbose", action="store_true", help="also the ok findings, files, insights, checks not evaluated")


def main(args: argparse.Namespace) -> int:
    from .. import advise, inputs, settings
    from ..advise import checks

    overrides = None
    if args.thresholds:
        try:
            overrides = inputs.read_json(args.thresholds, "a JSON object of thresholds")
            if not isinstance(overrides, dict):
                raise ValueError("expected a JSON object of threshold names and values")
            checks.thresholds(overrides)
        except (OSError, ValueError) as e:
            print(
                f"iotuner advise: --thresholds {args.thresholds}: {getattr(e, 'strerror', None) or e}", file=sys.stderr
            )
            return advise.EXIT_USAGE
    problem = args.calibration and advise.calibration_problem(args.calibration)
    if problem:
        print(f"iotuner advise: --calibration: {problem}", file=sys.stderr)
        return advise.EXIT_USAGE
    try:
        advice = advise.advise(args.input, overrides, nodes=args.nodes, calibration=args.calibration)
    except advise.InputError as e:
        print(f"iotuner advise: {e}", file=sys.stderr)
        return e.exit_code
    written = []
    if args.output:
        recs = advice.get("recommendations") or []
        settings.save(recs[0]["document"] if recs else advice["fixes"]["document"], args.output)
        written.append(f"recommended settings: {args.output}" if recs else f"fixes: {args.output}")
    html = args.html or (str(Path(args.output).with_suffix(".html")) if args.output else None)
    if html:
        from ..htmlreport import render_advice, write

        write(render_advice(advice), html)
        written.append(f"page: {html}")
    if args.json:
        print(json.dumps(advice, indent=2))
    else:
        from ..advise.console import print_advice
        from ..render import console_for_output

        console = console_for_output()
        print_advice(advice, console, verbose=args.verbose)
        for w in written:
            console.print(w)
    return advice["exit_code"]
