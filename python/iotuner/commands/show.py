"""iotuner show: a saved run report's tables, or a finished tuning's result."""

from __future__ import annotations

import argparse
import sys

ORDER = 40
HELP = "print a saved run report (tables, --json, --csv per phase) or a tune output directory's result"
DESCRIPTION = (
    "Print what a run report holds: the I/O phases and the settings (requested, effective, why they "
    "differ), and smart mode's decisions. --csv prints one line per phase for spreadsheets and awk "
    "(bandwidth in MiB/s: 2^20 bytes per second, as every iotuner table). Given a tune output "
    "directory (with summary.json), re-prints the tuning's result as 'iotuner tune' did at its end."
)
EPILOG = "examples:\n  iotuner show run.json\n  iotuner show run.json --csv > phases.csv\n  iotuner show iotuner-demo"

CSV_COLUMNS = (
    "phase",
    "file",
    "identity",
    "files",
    "kind",
    "driver",
    "opened",
    "ranks",
    "bytes_written",
    "bytes_read",
    "wall_time_s",
    "io_time_s",
    "bandwidth_mib_s",
    "posix_bytes_written",
    "posix_bytes_read",
    "stdio_bytes_written",  # buffered C library calls (fwrite, fprintf, ...): their system calls are not seen
    "stdio_bytes_read",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("report", metavar="REPORT|DIR", help="a run report (JSON), or a tune output directory")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the report (or summary.json) as JSON")
    out.add_argument("--csv", action="store_true", help="print one CSV line per I/O phase")


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    if Path(args.report).is_dir():
        return _show_tuning(Path(args.report), args)
    from .. import render, run_report

    rep = run_report.load(args.report)  # ReportError: one line, exit 2 (cli)
    if args.json:
        import json

        print(json.dumps(rep.data, indent=2))
        return 0
    console = render.console_for_output()
    try:
        if args.csv:
            text = _csv(rep)
        else:
            with console.capture() as page:  # a damaged report prints nothing but the line that says so
                render.print_report(rep, console)
                if rep.data.get("smart"):
                    from .. import smart_mode

                    smart_mode.print_summary(console, rep)
            text = page.get()
    except run_report.DAMAGE as e:
        raise run_report.malformed(e, args.report) from None
    sys.stdout.write(text)
    return 0


def _csv(rep) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for p in rep.phases:
        posix, stdio = p.get("posix") or {}, p.get("stdio") or {}
        w.writerow(
            [
                p["id"],
                p["file"],
                p.get("identity", ""),
                p.get("files", 1),
                p["kind"],
                p.get("driver") or "",
                p.get("opened", ""),
                p["ranks"],
                p["bytes_written"],
                p["bytes_read"],
                p["wall_time_s"],
                p["io_time_s"],
                p["bandwidth_mib_s"],
                posix["bytes_written"],
                posix["bytes_read"],
                stdio.get("bytes_written", 0),
                stdio.get("bytes_read", 0),
            ]
        )
    return buf.getvalue()


def _show_tuning(out, args: argparse.Namespace) -> int:
    from .. import inputs, render, tune_output

    summary = tune_output.summary(out)  # TuneOutputError: one line, exit 2 (cli)
    best = tune_output.best(out) or {"version": 1, "groups": []}
    if args.csv:
        sys.stdout.write(inputs.read_text(out / "trials.csv", "trials.csv"))
        return 0
    if args.json:
        import json

        print(json.dumps({"summary": summary, "best": best}, indent=2))
        return 0
    from ..tune import printout

    console = render.console_for_output()
    try:
        with console.capture() as page:
            printout.print_outcome(console, summary, best, out)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        raise inputs.InputError(f"{out / 'summary.json'} is damaged ({type(e).__name__}: {e})") from None
    sys.stdout.write(page.get().lstrip("\n"))
    return 0
