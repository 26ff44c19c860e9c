"""iotuner kernel: cut a C application down to its I/O kernel (TunIO's I/O discovery)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ORDER = 25
HELP = "cut a C application down to its I/O kernel, build it and validate it against the application"
DESCRIPTION = (
    "Reduce an MPI + HDF5 application written in C to the code its I/O depends on: the HDF5, "
    "MPI-IO, POSIX and stdio file calls, everything their arguments, conditions and loops need, "
    "across source files. The kernel is built with the application's own flags, then the "
    "application and the kernel both run under iotuner's runtime and their bytes per I/O phase "
    "must match (0.01%). A kernel that does not build or does not match is not used: "
    "OUTDIR/kernel.json then says why, and tools fall back to the application. "
    "Mark code with /* iotuner:keep begin */ ... /* iotuner:keep end */ (or drop) to override "
    "the extractor; see docs/kernel.md."
)
EPILOG = (
    "examples:\n"
    "  iotuner kernel src/*.c -o kern -- ./sim -o {scratch} -n 100\n"
    "  iotuner kernel src/*.c --compile-commands build -o kern --loop-fraction 0.01 \\\n"
    "      -- ./sim in.nml\n"
    "  iotuner kernel main.c io.c -o kern --path-prefix /tmp/kern -- ./sim {scratch}\n"
    "exit status: 0 kernel validated (or built, with --no-validate); 1 fell back to the application; "
    "2 bad input"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="the application's C source files")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTDIR",
        help="directory for the kernel: sources, Makefile, kernel.json, validation runs",
    )
    g = p.add_argument_group("building (the application's own flags)")
    g.add_argument(
        "--compile-commands",
        metavar="DIR",
        help="directory with compile_commands.json (CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON; Bear)",
    )
    g.add_argument("--cc", metavar="CC", help="compiler when there is no compilation database (default: mpicc.mpich)")
    g.add_argument("--cflags", metavar="FLAGS", help="compile flags without a database (default -O2; HDF5's are added)")
    g.add_argument("--ldflags", metavar="FLAGS", help="link flags (default: the shared parallel HDF5 and -lm)")
    r = p.add_argument_group("reductions")
    r.add_argument(
        "--keep-compute",
        action="store_true",
        help="keep the compute that only makes the values written (by default the kernel writes buffers "
        "of the right sizes and layout without computing them; kept anyway when a compression "
        "filter is set, since the values then decide the bytes)",
    )
    r.add_argument(
        "--loop-fraction",
        type=float,
        default=1.0,
        metavar="F",
        help="run this fraction of the iterations of loops containing I/O (at least one); the "
        "manifest records the factor that scales the kernel's bytes back (default 1: no reduction)",
    )
    r.add_argument(
        "--path-prefix",
        metavar="DIR",
        help="move every file the kernel writes under DIR (e.g. /dev/shm/kern); files it only reads "
        "stay where they are unless the kernel wrote them under DIR",
    )
    v = p.add_argument_group("validation")
    v.add_argument("--no-validate", action="store_true", help="build only; the manifest says 'unvalidated'")
    v.add_argument("--ranks", type=int, default=2, metavar="N", help="MPI ranks (default 2)")
    v.add_argument(
        "--launcher",
        default="local",
        choices=("local", "none"),
        help="local: mpiexec -n N APP; none: the command as given (default local)",
    )
    v.add_argument(
        "--mpiexec",
        metavar="CMD",
        help="MPI launcher (default: the first of mpiexec, mpirun, "
        "mpiexec.mpich on the PATH; mpiexec.mpich where mpiexec is a "
        "Debian alternative)",
    )
    v.add_argument(
        "--repeats",
        type=int,
        default=3,
        metavar="N",
        help="pairs of application and kernel runs, interleaved, for the evaluation times and the kernel's "
        "speed-up (default 3; 1: one run each, no spread)",
    )
    v.add_argument(
        "--tolerance",
        type=float,
        default=0.01,
        metavar="PCT",
        help="bytes per phase must match within PCT percent (default 0.01)",
    )
    v.add_argument("--timeout", type=float, metavar="S", help="limit of one application run in seconds")
    v.add_argument("--json", action="store_true", help="print kernel.json instead of the summary")
    p.add_argument(
        "command",
        nargs="*",
        metavar="-- APP ARGS",
        help="the application without launcher; {scratch} becomes a fresh directory per run",
    )
    # argparse cannot follow a '+' positional (SOURCE...) with a REMAINDER one: the application's
    # words after '--' are split off before argparse sees them.
    parse = p.parse_known_args

    def split_at_dashes(args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        tail: list[str] = []
        if "--" in args:
            i = args.index("--")
            args, tail = args[:i], args[i + 1 :]
        ns, extra = parse(args, namespace)
        ns.command = tail
        return ns, extra

    p.parse_known_args = split_at_dashes


def main(args: argparse.Namespace) -> int:
    import json

    from .. import optional
    from ..kernel import fmt

    # before the extractor's modules, which import libclang's bindings: one line, not a traceback
    optional.load("clang.cindex", "cutting a kernel")
    try:
        fmt.clang_format()
    except fmt.FormatError as e:
        raise optional.Missing(f"cutting a kernel needs clang-format ({e})") from None
    from ..kernel import discover
    from ..kernel.validate import Launch
    from ..tune.launch.local import default_mpiexec

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if args.ranks < 1 or args.repeats < 1:
        print("iotuner kernel: --ranks and --repeats must be at least 1", file=sys.stderr)
        return 2
    opts = discover.Options(
        sources=[Path(s).resolve() for s in args.sources],
        outdir=Path(args.output).resolve(),
        app_command=command,
        cwd=Path.cwd(),
        compile_commands=Path(args.compile_commands).resolve() if args.compile_commands else None,
        cc=args.cc,
        cflags=args.cflags,
        ldflags=args.ldflags,
        loop_fraction=args.loop_fraction,
        keep_compute=args.keep_compute,
        path_prefix=args.path_prefix,
        launch=Launch(args.launcher, args.ranks, args.mpiexec or default_mpiexec()),
        validate=not args.no_validate,
        repeats=args.repeats,
        tolerance=args.tolerance / 100,
        timeout=args.timeout,
    )
    progress = (lambda s: None) if args.json else (lambda s: print(f"iotuner kernel: {s}", file=sys.stderr))
    try:
        k = discover.discover_io(opts, progress)
    except discover.OptionsError as e:
        print(f"iotuner kernel: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(k.data, indent=1))
    else:
        from ..kernel import summary

        summary.print_summary(k)
    return 1 if k.status == "fallback" else 0
