"""iotuner run: an application with settings applied, verified and measured."""

from __future__ import annotations

import argparse
import os
import sys

ORDER = 10
HELP = "run an application with settings applied, verified and measured"
DESCRIPTION = (
    "Run an unmodified MPI (or serial) application with libiotuner.so preloaded. Settings from "
    "--config are applied to every matching file; afterwards you get a table per I/O phase "
    "(bytes, time, bandwidth) and, for every setting, what was requested, what took effect and "
    "why they differ. A bad or missing settings file never stops the job: it runs untuned "
    "with one warning; nor does a report path iotuner cannot write (a read-only directory, a directory, "
    "a name too long): the report goes to a temporary path instead, and the warning says where. The exit status "
    "is the application's (128 + the signal when a signal killed it; 1 when ranks never reached MPI_Finalize "
    "although the launcher exited with 0)."
)
EPILOG = (
    "examples:\n  iotuner run --config tuned.json -- mpiexec -n 2 vpicio -o /scratch\n"
    "  iotuner run --json-out run.json -- srun -n 256 ./app > app.out\n"
    "      (app.out: the application's output only)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="settings document to apply (see 'iotuner knobs')")
    p.add_argument("--report", metavar="FILE", help="also keep the run report (JSON) in FILE")
    p.add_argument(
        "--json-out",
        metavar="FILE",
        help="write the run report (JSON) to FILE and the tables to stderr: stdout carries only the "
        "application's own output",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the run report as JSON instead of tables, after the application's own output on "
        "the same stdout (for a clean JSON file use --json-out)",
    )
    p.add_argument("--verbose", action="store_true", help="the runtime prints what it does on stderr")
    p.add_argument(
        "--count-ops",
        action="store_true",
        help="count the MPI and POSIX operations inside each MPI-IO data call (the report's access "
        "section; for checking the hybrid model, not for timing)",
    )
    p.add_argument(
        "command", nargs=argparse.REMAINDER, metavar="-- LAUNCHER APP ARGS", help="the job to run, launcher included"
    )


def main(args: argparse.Namespace) -> int:
    import json

    from .. import native, render, runner
    from ..destinations import shown

    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    if not command:
        print("iotuner run: give the command to run after --, e.g. iotuner run -- mpiexec -n 2 ./app", file=sys.stderr)
        return 2
    from .. import mpiabi

    if (found := mpiabi.mismatch(command)) is not None:  # nothing runs: every rank would be rank 0 of its own
        print(f"iotuner run: {mpiabi.mismatch_message(found)}", file=sys.stderr)
        return 2
    env = None
    if args.config:  # the runtime warns and runs untuned; say why here, before the job starts, and only here
        from .. import inputs, settings

        try:
            for warning in settings.near_misses(settings.load(args.config)):
                print(f"iotuner: warning: {warning}", file=sys.stderr)
        except inputs.NotAFile:
            raise  # a FIFO or a device is no settings file: the command line is wrong (exit 2)
        except (inputs.InputError, settings.SettingsError) as e:
            print(f"iotuner: warning: {e}; the application runs untuned", file=sys.stderr)
            env = dict(os.environ, IOTUNER_SETTINGS_WARNED="1")  # the runtime then keeps it to the report
    # where the report goes, said before the job starts: a path it cannot be written to never stops the job
    from ..destinations import forget_if_unused, report_destination, why_unwritable

    target, warning = report_destination(args.json_out or args.report, "--json-out" if args.json_out else "--report")
    if warning:
        print(f"iotuner: warning: {warning}", file=sys.stderr)
    copy_to = args.report if args.json_out and args.report else None
    if copy_to and why_unwritable(copy_to):
        print(
            f"iotuner: warning: --report {shown(copy_to)}: {why_unwritable(copy_to)}; the report is kept only "
            f"at {target}",
            file=sys.stderr,
        )
        copy_to = None
    try:
        # run by hand: PR_SET_PDEATHSIG stops the launcher if iotuner dies; the tuner's watchdog is not needed
        result = runner.run(
            command,
            config=args.config,
            report=target,
            verbose=args.verbose,
            tether=False,
            count_ops=args.count_ops,
            env=env,
        )
    except FileNotFoundError as e:
        print(f"iotuner run: cannot start '{command[0]}': {e.strerror}", file=sys.stderr)
        return 127
    except native.NativeMissing as e:
        print(f"iotuner run: {e}", file=sys.stderr)
        return 2
    written = [target] if target is not None and result.report is not None and (args.json_out or args.report) else []
    if copy_to and result.report is not None:
        from ..files import write_atomic

        try:
            written.append(write_atomic(copy_to, json.dumps(result.report.data, indent=1) + "\n"))
        except OSError as e:  # files.OutputError names the path and the reason
            print(f"iotuner: warning: {e}; the report is kept only at {target}", file=sys.stderr)
    if warning and result.report is None:
        forget_if_unused(target)
    console = render.console_for_output(sys.stderr if args.json_out else None)
    if result.report is None:
        console.print(f"[yellow]iotuner: {result.report_error}[/yellow]")
    elif args.json:
        print(json.dumps(result.report.data, indent=2))
    else:
        render.print_report(result.report, console, live=True)
        for path in written:
            console.print(f"report written to {path}")
    if result.exit_message():
        console.print(f"[red]{result.exit_message()}[/red]")
    return result.exit_status
