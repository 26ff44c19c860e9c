"""iotuner worker: one more worker on an existing study."""

from __future__ import annotations

import argparse

ORDER = 25
HELP = "work on an existing study: one more ask / run / tell loop (start it from your own batch scripts)"
DESCRIPTION = (
    "Join a study made by iotuner tune and work on it until its budget is spent: ask the strategy for a "
    "point, run the application, tell the result, like every other worker of the study. Workers on "
    "several machines cooperate through the study storage (PostgreSQL for many). A worker that dies "
    "leaves its trial to the others: it runs again once. At the end, every worker waits for the "
    "confirmation round (one of them runs it) and writes the results."
)
EPILOG = (
    "examples:\n"
    "  iotuner worker --study vpic --storage postgresql://db.example.org/tuning\n"
    "  srun -N 4 -n 128 iotuner worker --study vpic --storage URL --launcher slurm\n"
    "      (its trials: job steps of this allocation)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..tune import arguments  # the options only: the tuner stack is imported by main

    arguments.add_worker_arguments(p)


def main(args: argparse.Namespace) -> int:
    from ..tune import session

    return session.worker(args)
