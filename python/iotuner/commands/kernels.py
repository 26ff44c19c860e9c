"""iotuner kernels: the bundled benchmark kernels."""

from __future__ import annotations

import argparse
import sys

ORDER = 80
HELP = "list the bundled benchmark kernels and where they are"


def add_arguments(p: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace) -> int:
    from .. import native
    try:
        d = native.native_dir() / "bin"
        names = native.bundled_programs()
    except native.NativeMissing as e:
        print(f"iotuner kernels: {e}", file=sys.stderr)
        return 2
    for name in names:
        print(f"{name:12s} {d / name}")
    return 0
