"""iotuner run: an application with settings applied, verified and measured."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ORDER = 10
HELP = "run an application with settings applied, verified and measured"
DESCRIPTION = ("Run an unmodified MPI (or serial) application with libiotuner.so preloaded. Settings from "
               "--config are applied to every matching file; afterwards you get a table per I/O phase "
               "(bytes, time, bandwidth) and, for every setting, what was requested, what took effect and "
               "why they differ. A bad or missing settings file never stops the job: it runs untuned "
               "with one warning. The exit status is the application's.")
EPILOG = "example:\n  iotuner run --config tuned.json --report run.json -- mpiexec.mpich -n 2 ./vpicio -o /scratch"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="settings document to apply (see 'iotuner knobs')")
    p.add_argument("--report", metavar="FILE", help="also keep the run report (JSON) in FILE")
    p.add_argument("--json", action="store_true", help="print the run report as JSON instead of tables")
    p.add_argument("--verbose", action="store_true", help="the runtime prints what it does on stderr")
    p.add_argument("--count-ops", action="store_true",
                   help="count the MPI and POSIX operations inside each MPI-IO data call (the report's access "
                        "section; for checking the hybrid model, not for timing)")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- LAUNCHER APP ARGS",
                   help="the job to run, launcher included")


def main(args: argparse.Namespace) -> int:
    import json

    from .. import native, render, runner
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    if not command:
        print("iotuner run: give the command to run after --, e.g. "
              "iotuner run -- mpiexec.mpich -n 2 ./app", file=sys.stderr)
        return 2
    if args.config and not Path(args.config).exists():
        # the runtime warns and runs untuned; say so here too, before the job starts
        print(f"iotuner: warning: settings file '{args.config}' does not exist; the application runs untuned",
              file=sys.stderr)
    try:
        # run by hand: PR_SET_PDEATHSIG stops the launcher if iotuner dies; the tuner's watchdog is not needed
        result = runner.run(command, config=args.config, report=args.report, verbose=args.verbose, tether=False,
                            count_ops=args.count_ops)
    except FileNotFoundError as e:
        print(f"iotuner run: cannot start '{command[0]}': {e.strerror}", file=sys.stderr)
        return 127
    except native.NativeMissing as e:
        print(f"iotuner run: {e}", file=sys.stderr)
        return 2
    console = render.console_for_output()
    if result.report is None:
        console.print(f"[yellow]iotuner: {result.report_error}[/yellow]")
    elif args.json:
        print(json.dumps(result.report.data, indent=2))
    else:
        render.print_report(result.report, console)
        if args.report:
            console.print(f"report written to {args.report}")
    if result.returncode != 0:
        console.print(f"[red]the application exited with status {result.returncode}[/red]")
    return result.returncode
