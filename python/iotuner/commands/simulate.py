"""iotuner simulate: an I/O phase at N ranks on a platform, under settings documents, side by side."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ORDER = 47
HELP = "predict an I/O phase at thousands of ranks under settings documents (SimGrid)"
DESCRIPTION = """Replays the I/O phases of a run report (collective MPI-IO calls from its access section; independent
calls, POSIX and a file per process from its counters), or the data files of a Darshan log (likewise from its
counters), at N ranks on M nodes of a platform: ROMIO's
operations for each settings document (counted by the hybrid model: exchange rounds, messages, file writes per
aggregator and stripe) become SimGrid activities on the platform's nodes, network and storage targets, so
aggregators that share OSTs and links slow each other down (on a Lustre platform, collective writes follow
ROMIO's Lustre driver: stripe s to aggregator s mod aggregators). Prints each document's predicted phase times
and bandwidth side by side, beside the run's own settings ("as run").

Platforms: `here` (this machine, from `iotuner calibrate`'s file), a bundled one (lustre-template, hopper), or a
platform file (docs/simulate.md)."""
EPILOG = """examples:
  iotuner simulate run.json --ranks 1024 --nodes 32 --platform lustre-template \\
      --config a.json b.json c.json
  iotuner simulate job.darshan --ranks 4096 --platform my-cluster.json \\
      --config tuned.json
  iotuner simulate run.json --platform here   # the run itself, simulated here
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("report", metavar="REPORT", help="a run report or a Darshan log")
    p.add_argument("--ranks", type=int, help="MPI ranks to simulate (default: as measured)")
    p.add_argument(
        "--nodes",
        type=int,
        help="nodes (default: the ranks over the platform's cores per node; 1 on a platform without a network)",
    )
    p.add_argument(
        "--platform",
        default="here",
        help="here (this machine's calibration), a bundled platform (lustre-template, hopper) or a "
        "platform file (default: here)",
    )
    p.add_argument(
        "--config",
        metavar="SETTINGS",
        nargs="+",
        action="extend",
        default=[],
        help="settings documents to compare (each a column)",
    )
    p.add_argument(
        "--calibration", metavar="FILE", help="the calibration file behind --platform here (default: this machine's)"
    )
    p.add_argument(
        "--save-platform",
        metavar="FILE",
        help="write the platform used as a platform file (e.g. this machine's, to edit)",
    )
    p.add_argument("--json", action="store_true", help="print the predictions as JSON")


def _name(path: str, paths: list[str]) -> str:
    stem = Path(path).stem
    return stem if sum(Path(q).stem == stem for q in paths) == 1 else path


def main(args: argparse.Namespace) -> int:
    from .. import render, settings
    from ..simulate import engine
    from ..simulate import platform as platforms
    from ..simulate import workload as workloads

    if args.ranks is not None and args.ranks < 1 or args.nodes is not None and args.nodes < 1:
        print("iotuner simulate: --ranks and --nodes must be at least 1", file=sys.stderr)
        return 2
    if args.ranks is not None:  # bounded work: refused before anything is built for the ranks
        why = engine.refusal(args.ranks)
        if why:
            print(f"iotuner simulate: --ranks {args.ranks}: {why}", file=sys.stderr)
            return 2
    try:
        pf = platforms.load(args.platform, args.calibration)
        wl = workloads.load(args.report, args.ranks)
        nodes = args.nodes or (-(-wl.ranks // pf.cores) if pf.nic_bw > 0 else 1)
        if nodes > wl.ranks:
            raise ValueError(f"--nodes {nodes} is more than the {wl.ranks} ranks")
        pf.check_nodes(nodes)
        docs = [(_name(c, args.config), settings.flatten(settings.load(c))) for c in args.config]
    except (workloads.WorkloadError, platforms.PlatformError, settings.SettingsError, ValueError, OSError) as e:
        print(f"iotuner simulate: {e}", file=sys.stderr)
        return 2
    if args.save_platform:
        from ..files import write_atomic

        write_atomic(args.save_platform, json.dumps(pf.to_json(), indent=1) + "\n")  # OutputError: one line
    started = time.monotonic()
    try:
        results = [engine.simulate(wl, pf, nodes, {}, "as run", as_run=True)]
        results += [engine.simulate(wl, pf, nodes, flat, name) for name, flat in docs]
    except engine.SimulateError as e:
        print(f"iotuner simulate: {e}", file=sys.stderr)
        return 1
    except ValueError as e:  # a settings value the model cannot read (a stripe size that is no size)
        print(f"iotuner simulate: {e}", file=sys.stderr)
        return 2
    took = time.monotonic() - started
    if args.json:
        print(
            json.dumps(
                {
                    "report": str(args.report),
                    "platform": pf.name,
                    "ranks": wl.ranks,
                    "nodes": nodes,
                    "measured_ranks": wl.measured_ranks,
                    "notes": wl.notes,
                    "seconds_to_simulate": took,
                    "results": [
                        {
                            "name": r.name,
                            "seconds": r.seconds,
                            "bytes": r.bytes,
                            "bandwidth_mib_s": r.bandwidth_mib_s,
                            "aggregators": r.aggregators,
                            "stripe_count": r.stripe_count,
                            "stripe_size": r.stripe_size,
                            "phases": [
                                {
                                    "label": p.label,
                                    "seconds": p.seconds,
                                    "bytes": p.bytes,
                                    "collective_s": p.collective_s,
                                    "targets_used": p.targets_used,
                                    "measured_s": p.measured_s,
                                }
                                for p in r.phases
                            ],
                        }
                        for r in results
                    ],
                },
                indent=1,
            )
        )
        return 0
    from rich.text import Text

    console = render.console_for_output()
    console.print(
        f"{wl.source}: {wl.measured_ranks} ranks measured, simulated at {wl.ranks} ranks on {nodes} "
        f"node(s) of platform {pf.name} ({pf.description})"
    )
    for note in wl.notes:
        console.print(Text(f"note: {note}", style="dim"))
    measured = any(p.measured_s for p in results[0].phases)
    header = (
        [("phase", "left")] + [(r.name, "right") for r in results] + ([("measured run", "right")] if measured else [])
    )
    rows = []
    for i, ph in enumerate(wl.phases):
        row = [ph.label] + [
            f"{render.fmt_seconds(r.phases[i].seconds)}\n"
            f"{render.fmt_bw(r.phases[i].bytes / 2**20 / r.phases[i].seconds)}"
            for r in results
        ]
        if measured:
            m = results[0].phases[i].measured_s
            row.append(render.fmt_seconds(m) if m else "-")
        rows.append(render.cells(*row))
    rows.append(None)
    rows.append(
        render.cells(
            f"total ({render.fmt_bytes(wl.bytes)})",
            *[f"{render.fmt_seconds(r.seconds)}\n{render.fmt_bw(r.bandwidth_mib_s)}" for r in results],
            *([""] if measured else []),
        )
    )
    rows.append(
        render.cells(
            "aggregators, stripes",
            *[
                f"{r.aggregators or '-'}, {r.stripe_count} x {render.fmt_bytes(r.stripe_size)}"
                if pf.lustre
                else f"{r.aggregators or '-'}"
                for r in results
            ],
            *([""] if measured else []),
        )
    )
    console.print(
        render.FittedTable(
            "predicted time and bandwidth of each phase (the slowest rank's I/O calls)", header, rows, wrap=("phase",)
        )
    )
    console.print(Text(f"simulated in {took:.1f} s", style="dim"))
    return 0
