"""Command-line interface: `iotuner <command> --help` for each command."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from rich.console import Console
from rich.table import Table

from . import __version__, catalogue, h5tuner, native, render, report, runner, settings

EPILOG = textwrap.dedent("""\
    examples:
      iotuner run -- mpiexec.mpich -n 2 ./app          measure every I/O phase of app
      iotuner run --config tuned.json -- mpiexec.mpich -n 2 ./app
      iotuner convert h5tuner.xml -o tuned.json         reuse an H5Tuner control file
      iotuner knobs                                     what can be set, and where
    """)


def _console() -> Console:
    return render.console_for_output()


def cmd_run(args: argparse.Namespace) -> int:
    command = args.command
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print("iotuner run: give the command to run after --, e.g. "
              "iotuner run -- mpiexec.mpich -n 2 ./app", file=sys.stderr)
        return 2
    if args.config and not Path(args.config).exists():
        # the runtime warns and runs untuned; say so here too, before the job starts
        print(f"iotuner: warning: settings file '{args.config}' does not exist; the application runs untuned",
              file=sys.stderr)
    try:
        result = runner.run(command, config=args.config, report=args.report, verbose=args.verbose)
    except FileNotFoundError as e:
        print(f"iotuner run: cannot start '{command[0]}': {e.strerror}", file=sys.stderr)
        return 127
    except native.NativeMissing as e:
        print(f"iotuner run: {e}", file=sys.stderr)
        return 2
    console = _console()
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


def cmd_smart(args: argparse.Namespace) -> int:
    from . import smart
    console = _console()
    if args.explain:
        table = Path(args.rules).read_text() if args.rules else None
        return smart.explain(args.explain, console, table)
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    if not command:
        print("iotuner smart: give the command to run after --, or --explain REPORT", file=sys.stderr)
        return 2
    return smart.run(command, report_path=args.report, verbose=args.verbose, rules_table=args.rules,
                     console=console)


def cmd_show(args: argparse.Namespace) -> int:
    try:
        rep = report.load(args.report)
    except report.ReportError as e:
        print(f"iotuner show: {e}", file=sys.stderr)
        return 1
    console = _console()
    render.print_report(rep, console)
    if rep.data.get("smart"):
        from . import smart
        smart.print_summary(console, rep)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    try:
        doc = settings.load(args.settings)
    except settings.SettingsError as e:
        print(f"iotuner check: {e}", file=sys.stderr)
        return 1
    print(json.dumps(doc, indent=2))
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    try:
        conv = h5tuner.convert_file(args.xml)
    except h5tuner.ConversionError as e:
        print(f"iotuner convert: {e}", file=sys.stderr)
        return 1
    for note in conv.notes:
        print(f"iotuner convert: note: {note}", file=sys.stderr)
    if args.output:
        settings.save(conv.document, args.output)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(json.dumps(conv.document, indent=2))
    return 0


def cmd_knobs(args: argparse.Namespace) -> int:
    knobs = [k for k in catalogue.knobs().values() if not args.layer or k.layer == args.layer]
    if args.json:
        print(json.dumps(native.core().catalogue(), indent=2))
        return 0
    t = Table(title="Knobs iotuner can set (settings documents: docs/settings.md)", title_justify="left")
    for col in ("knob", "type", "default", "applied at", "what it does"):
        t.add_column(col, overflow="fold")
    for k in knobs:
        typ = "|".join(k.choices) if k.choices else k.type
        t.add_row(k.key, typ, k.default or "-", k.applied_at.replace("_", " "), k.description)
    _console().print(t)
    print("Any other MPI-IO hint can be given by name under \"mpiio\"; it is passed through and read back.")
    return 0


def cmd_kernels(args: argparse.Namespace) -> int:
    try:
        d = native.native_dir() / "bin"
        names = native.bundled_programs()
    except native.NativeMissing as e:
        print(f"iotuner kernels: {e}", file=sys.stderr)
        return 2
    for name in names:
        print(f"{name:12s} {d / name}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """A real tuning of a bundled kernel on this machine (the main job of `make demo`)."""
    import os
    import shutil
    import tempfile
    out = Path(args.out).resolve()
    if out.exists():  # the demo starts afresh, but only ever replaces an earlier result
        if not out.is_dir() or (any(out.iterdir()) and not (out / "summary.json").is_file()):
            print(f"iotuner demo: {out} exists and is not an earlier demo or tune output (no summary.json): "
                  f"it is left alone. Give --out a new or empty directory.", file=sys.stderr)
            return 2
        shutil.rmtree(out)
    out.mkdir(parents=True)
    baseline = settings.save({"version": 1, "description": "ROMIO forced to collective buffering on one aggregator",
                              "mpiio": {"romio_cb_write": "enable"}}, out / "baseline.json")
    shm = Path("/dev/shm")
    scratch_root = shm if shm.is_dir() and os.access(shm, os.W_OK) else None  # steadier than disk here
    print("iotuner demo: tuning the IOR-like kernel h5ior (2 ranks, 64 MiB each, 1 MiB collective transfers).\n"
          "Its baseline settings force ROMIO's collective buffering through one aggregator; the tuner searches\n"
          f"the 'romio' space for {args.trials} trials, then confirms the best against the baseline.\n", flush=True)
    with tempfile.TemporaryDirectory(prefix="iotuner-demo-", dir=scratch_root) as scratch:
        argv = ["tune", "--baseline", str(baseline), "--space", "romio", "--strategy", "bayes", "--trials",
                str(args.trials), "--objective", "write-bw", "--study", "demo", "--out", str(out), "--scratch", scratch,
                "--", str(native.executable("h5ior")), "-b", "64M", "-x", "1M", "-o", "{scratch}"]
        return main(argv)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="iotuner",
        description="Make the parallel I/O of unmodified MPI + HDF5 applications fast: apply HDF5, MPI-IO and "
                    "Lustre settings at run time, verify what took effect, and measure every I/O phase.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"iotuner {__version__}")
    sub = p.add_subparsers(dest="cmd", metavar="<command>")

    r = sub.add_parser(
        "run", help="run an application with settings applied, verified and measured",
        description="Run an unmodified MPI (or serial) application with libiotuner.so preloaded. Settings from "
                    "--config are applied to every matching file; afterwards you get a table per I/O phase "
                    "(bytes, time, bandwidth) and, for every setting, what was requested, what took effect and "
                    "why they differ. A bad or missing settings file never stops the job: it runs untuned "
                    "with one warning. The exit status is the application's.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  iotuner run --config tuned.json --report run.json -- mpiexec.mpich -n 2 ./vpicio -o /scratch")
    r.add_argument("--config", metavar="FILE", help="settings document to apply (see 'iotuner knobs')")
    r.add_argument("--report", metavar="FILE", help="also keep the run report (JSON) in FILE")
    r.add_argument("--json", action="store_true", help="print the run report as JSON instead of tables")
    r.add_argument("--verbose", action="store_true", help="the runtime prints what it does on stderr")
    r.add_argument("command", nargs=argparse.REMAINDER, metavar="-- LAUNCHER APP ARGS",
                   help="the job to run, launcher included")
    r.set_defaults(func=cmd_run)

    s = sub.add_parser("show", help="print the tables of a saved run report")
    s.add_argument("report", metavar="REPORT")
    s.set_defaults(func=cmd_show)

    c = sub.add_parser("check", help="validate a settings document and print it normalized")
    c.add_argument("settings", metavar="SETTINGS")
    c.set_defaults(func=cmd_check)

    v = sub.add_parser("convert", help="turn an H5Tuner XML control file into a settings document",
                       description="Convert an H5Tuner XML control file (sieve_buf_size, alignment, chunk, "
                                   "cb_buffer_size, cb_nodes, striping_factor, striping_unit, ... with optional "
                                   "FileName / VariableName attributes) into an iotuner settings document.")
    v.add_argument("xml", metavar="H5TUNER.xml")
    v.add_argument("-o", "--output", metavar="FILE", help="write the document here instead of stdout")
    v.set_defaults(func=cmd_convert)

    k = sub.add_parser("knobs", help="list the knobs iotuner can set")
    k.add_argument("--layer", choices=catalogue.LAYERS)
    k.add_argument("--json", action="store_true", help="the full catalogue as JSON")
    k.set_defaults(func=cmd_knobs)

    t = sub.add_parser(
        "tune", help="search for the best settings with real trial runs (or a synthetic objective)",
        description="Tune the I/O settings of an application with trial runs. Each trial writes a settings "
                    "document, runs the application under libiotuner.so and reads its run report. The default "
                    "settings are measured as a baseline between trials; at the end the best configurations are "
                    "rerun interleaved with the default, and a gain is claimed only beyond the measured noise. "
                    "The study lives in a database: kill the tuner at any time and continue with --resume.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  iotuner tune --trials 30 --baseline slow.json -- ./h5ior -b 64M -o {scratch}\n"
               "  iotuner tune --space tunio --strategy ga --time 2h --repeats 3 -- ./vpicio -o {scratch}\n"
               "  iotuner tune --resume --study iotuner\n"
               "  iotuner tune --synthetic ufs --strategy random --trials 50")
    from .tune import session
    session.add_arguments(t)
    t.set_defaults(func=lambda a: session.run(a))

    m = sub.add_parser(
        "smart", help="run with SmartIO's runtime tuning: learn the first phase, optimize the ones that recur",
        description="Run an application with smart mode on: libiotuner.so predicts each file phase's I/O calls "
                    "(a Sequitur grammar per rank), learns the first phase of every file name (numbers "
                    "normalized: chk_0001.h5 and chk_0002.h5 are one), extracts insights (collective or "
                    "independent, transfer size, locality, shared file or one per process, file system) and "
                    "applies SmartIO's rules to the phases that recur. A feedback loop judges the phases that "
                    "run under the rules: two in a row slower than the reference beyond the margin "
                    "(IOTUNER_SMART_MARGIN, default 0.25) make the next phase a probe with the default settings; "
                    "if the probe is faster, each rule is tried alone and the ones that hurt are rolled back. "
                    "With --explain, prints the insights -> rules -> settings chain of a saved report, re-running "
                    "the same rules.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  iotuner smart --verbose -- mpiexec.mpich -n 2 ./flashio -t 7\n"
               "  iotuner smart --report run.json -- srun -n 64 ./app\n  iotuner smart --explain run.json")
    m.add_argument("--verbose", action="store_true", help="rank 0 logs every phase's decisions on stderr")
    m.add_argument("--report", metavar="FILE", help="keep the run report (JSON) in FILE")
    m.add_argument("--explain", metavar="REPORT", help="explain the decisions recorded in a run report")
    m.add_argument("--rules", metavar="FILE", help=argparse.SUPPRESS)  # tests: a replacement rules table
    m.add_argument("command", nargs=argparse.REMAINDER, metavar="-- LAUNCHER APP ARGS")
    m.set_defaults(func=cmd_smart)

    d = sub.add_parser("demo", help="tune a bundled kernel on this machine (a few minutes)")
    d.add_argument("--trials", type=int, default=20, help="trials (default 20)")
    d.add_argument("--out", default="iotuner-demo",
                   help="where the results go (default ./iotuner-demo): a new or empty directory, or an earlier "
                        "demo or tune output (with its summary.json), which is replaced")
    d.set_defaults(func=cmd_demo)

    b = sub.add_parser("kernels", help="list the bundled benchmark kernels and where they are")
    b.set_defaults(func=cmd_kernels)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except native.NativeMissing as e:
        print(f"iotuner: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
