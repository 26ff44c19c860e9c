"""iotuner tune: search for the best settings with trial runs."""

from __future__ import annotations

import argparse

ORDER = 20
HELP = "search for the best settings with real trial runs (or a synthetic objective)"
DESCRIPTION = (
    "Tune the I/O settings of an application with trial runs. Each trial writes a settings "
    "document, runs the application under libiotuner.so and reads its run report. The default "
    "settings are measured as a baseline between trials; at the end the best configurations are "
    "rerun interleaved with the default, and a gain is claimed only beyond the measured noise. "
    "The study lives in a database: kill the tuner at any time and continue with --resume. A study is named "
    "after the program it tunes (--study to name it), and its results go to iotuner-STUDY."
)
EPILOG = (
    "examples:\n"
    "  iotuner tune --trials 30 --baseline slow.json -- h5ior -b 64M -o {scratch}\n"
    "  iotuner tune --space tunio --strategy ga --time 2h -- vpicio -o {scratch}\n"
    "  iotuner tune --resume --study h5ior\n"
    "  iotuner tune --synthetic ufs --strategy random --trials 50"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..tune import arguments  # the options only: the tuner stack is imported by main

    arguments.add_arguments(p)


def main(args: argparse.Namespace) -> int:
    from ..tune import session

    return session.run(args)
