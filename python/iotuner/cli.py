"""Command-line interface: `iotuner <command> --help` for each command.

The commands live in `iotuner.commands`, one module each. The top-level
parser lists them all, but only the chosen command builds its arguments, so a
command pays only for its own imports.
"""

from __future__ import annotations

import argparse
import functools
import sys
import textwrap

from . import __version__, commands

EPILOG = textwrap.dedent("""\
    examples:
      iotuner run -- mpiexec -n 2 ./app             every I/O phase of app, measured
      iotuner run --config tuned.json -- mpiexec -n 2 ./app
      iotuner convert h5tuner.xml -o tuned.json     from H5Tuner or ROMIO_HINTS
      iotuner export best.json --to romio-hints     for sites without LD_PRELOAD
      iotuner knobs                                 what can be set, and where
    """)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs fit the terminal: prose is refilled to its width (COLUMNS when piped), and
    indented lines (examples) stay as written. A paragraph without indented lines is one piece of prose;
    in one with them, each unindented line is refilled on its own."""

    def __init__(self, prog: str, **kw) -> None:
        from .terminal import width

        super().__init__(prog, width=width(sys.stdout) - 2, **kw)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        def fill(prose: str) -> list[str]:
            return textwrap.wrap(
                " ".join(prose.split()), width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
            ) or [indent]

        out = []
        for para in text.strip("\n").split("\n\n"):
            lines = para.split("\n")
            if not any(line[:1].isspace() for line in lines):
                out.append("\n".join(fill(para)))
            else:
                out.append("\n".join(indent + line if line[:1].isspace() else "\n".join(fill(line)) for line in lines))
        return "\n\n".join(out)


def _chosen(argv: list[str], names: list[str]) -> str | None:
    """The command named in argv: its first word that is not an option."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in names else None
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    return _parser(_chosen(sys.argv[1:] if argv is None else argv, commands.names()))


@functools.cache
def _parser(chosen: str | None) -> argparse.ArgumentParser:
    """The parser with the arguments of the chosen command only; built once per command in a process, since
    argparse takes half of a short command's time and in-process callers (the tests) run main many times."""
    p = argparse.ArgumentParser(
        prog="iotuner",
        description="Make the parallel I/O of unmodified MPI + HDF5 applications fast: apply HDF5, MPI-IO and "
        "Lustre settings at run time, verify what took effect, and measure every I/O phase.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"iotuner {__version__}")
    sub = p.add_subparsers(dest="cmd", metavar="<command>")
    for name in commands.names():
        mod = commands.get(name)
        c = sub.add_parser(
            name,
            help=mod.HELP,
            description=getattr(mod, "DESCRIPTION", mod.HELP),
            epilog=getattr(mod, "EPILOG", None),
            formatter_class=HelpFormatter,
        )
        if name == chosen:
            mod.add_arguments(c)
        c.set_defaults(func=mod.main)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except ModuleNotFoundError as e:  # a dependency of iotuner itself (bin/iotuner run by a bare python3)
        from .optional import dependency_message

        line = dependency_message(e)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return 2


def _main(argv: list[str] | None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from . import files, inputs, native

    try:
        return args.func(args)
    except native.NativeMissing as e:
        print(f"iotuner: {e}", file=sys.stderr)
        return 2
    except (inputs.InputError, files.OutputError) as e:  # a file the command cannot read or write: one line
        print(f"iotuner {args.cmd}: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `iotuner ... | head`: the reader has what it wanted
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0


if __name__ == "__main__":
    sys.exit(main())
