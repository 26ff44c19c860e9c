"""iotuner knobs: the knob catalogue."""

from __future__ import annotations

import argparse
import json

ORDER = 70
HELP = "list the knobs iotuner can set"
DESCRIPTION = (
    "The knob catalogue of the C core, the one place each knob is defined: its layer (hdf5, mpiio, "
    "lustre, ompio, pnetcdf), type, default, where it is applied (file access, transfer, dataset create, "
    "MPI hint, file layout, MCA parameter, PnetCDF hint) and what it does. --json adds which libraries honour "
    "each knob and the knobs it "
    "requires (cb_nodes requires cb_config_list)."
)
LAYERS = ("hdf5", "mpiio", "lustre", "ompio", "pnetcdf")  # as catalogue.LAYERS, without loading the core


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--layer", choices=LAYERS)
    p.add_argument("--json", action="store_true", help="the full catalogue as JSON")


def main(args: argparse.Namespace) -> int:
    from .. import catalogue, native, render

    knobs = [k for k in catalogue.knobs().values() if not args.layer or k.layer == args.layer]
    if args.json:
        cat = native.core().catalogue()
        cat["knobs"] = [k for k in cat["knobs"] if not args.layer or k["layer"] == args.layer]
        print(json.dumps(cat, indent=2))
        return 0
    from rich.text import Text

    rows = [
        render.cells(
            k.key,
            " | ".join(k.choices) if k.choices else k.type,
            k.default or "-",
            k.applied_at.replace("_", " "),
            k.description,
        )
        for k in knobs
    ]
    header = [(col, "left") for col in ("knob", "type", "default", "applied at", "what it does")]
    console = render.console_for_output()
    console.print(
        render.FittedTable(
            "Knobs iotuner can set (settings documents: docs/settings.md)",
            header,
            rows,
            wrap=("type", "default", "what it does"),
        )
    )
    console.print(Text('Any other MPI-IO hint can be given by name under "mpiio"; it is passed through and read back.'))
    return 0
