"""The clang-format pre-pass of section III-B: one statement per line, braces on
their own lines, no line breaking (a long column limit), and braces around
every body (so a dropped statement never leaves an `if` without a body)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

STYLE = (
    "{BasedOnStyle: LLVM, ColumnLimit: 400, BreakBeforeBraces: Allman, InsertBraces: true, "
    "AllowShortBlocksOnASingleLine: Never, AllowShortIfStatementsOnASingleLine: Never, "
    "AllowShortLoopsOnASingleLine: false, AllowShortFunctionsOnASingleLine: None, "
    "AllowShortCaseLabelsOnASingleLine: false, AllowShortEnumsOnASingleLine: false, "
    "IndentWidth: 4, IndentCaseLabels: true, SortIncludes: Never, ReflowComments: false, "
    "AlignEscapedNewlines: DontAlign}"
)


class FormatError(RuntimeError):
    pass


def clang_format() -> str:
    """The clang-format binary: the `clang-format` wheel's (next to this Python) first, then PATH."""
    here = Path(sys.executable).parent / "clang-format"
    if here.exists():
        return str(here)
    found = shutil.which("clang-format")
    if not found:
        from ..optional import pip_command

        raise FormatError(
            "clang-format is neither beside this Python nor on the PATH: " + pip_command(["clang-format>=15"])
        )
    return found


def version() -> str:
    r = subprocess.run([clang_format(), "--version"], capture_output=True, text=True)
    return r.stdout.strip()


def format_source(text: bytes, name: str) -> bytes:
    r = subprocess.run(
        [clang_format(), f"--style={STYLE}", f"--assume-filename={name}"], input=text, capture_output=True, timeout=120
    )
    if r.returncode != 0:
        raise FormatError(f"clang-format failed on {name}: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout
