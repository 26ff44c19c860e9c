"""iotuner dashboard: a study in optuna-dashboard, with the tuner's verdict written on it."""

from __future__ import annotations

import argparse
import sys

ORDER = 35
HELP = "watch a study live in optuna-dashboard (on 127.0.0.1 by default)"
DESCRIPTION = (
    "Open a study's storage in optuna-dashboard. The study's trials are its search trials, with their "
    "settings as plain values, what took effect and which trial each duplicates; the other runs "
    "(baseline, training, confirmation) are trials of its companion study NAME.iotuner, with their "
    "kind. The study's note says which trial the confirmation round confirmed, with its statistics: "
    "the 'best trial' the dashboard shows by itself is only the best search trial as told, which noise "
    "favours."
)
EPILOG = (
    "example:\n  iotuner dashboard --out iotuner-demo\n  iotuner dashboard --storage postgresql://db/tuning --port 8081"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--study", metavar="NAME", help="the study to annotate (default: every study of the storage)")
    p.add_argument(
        "--storage", metavar="URL", help="the study storage (default: $IOTUNER_STORAGE, else sqlite:///OUT/study.db)"
    )
    p.add_argument("--out", default=".", metavar="DIR", help="a tune output directory holding study.db (default .)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .. import optional

    optuna_dashboard = optional.load("optuna_dashboard", "the live dashboard")
    from ..tune import dashboard_note, session
    from ..tune.store import StudyError

    try:
        storage = session.storage_url(args.storage, f"sqlite:///{(Path(args.out) / 'study.db').resolve()}")
        names = dashboard_note.annotate(storage, args.study)
    except (StudyError, ValueError) as e:
        print(f"iotuner dashboard: {e}", file=sys.stderr)
        return 2
    print(f"optuna-dashboard on http://{args.host}:{args.port}/ for {', '.join(names)} (Ctrl-C stops it)", flush=True)
    try:
        optuna_dashboard.run_server(storage, host=args.host, port=args.port)
    except KeyboardInterrupt:
        pass
    return 0
