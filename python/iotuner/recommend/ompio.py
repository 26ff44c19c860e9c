"""Open MPI's OMPIO: what the rules' and checks' ROMIO hints mean there, and its collective component.

A run whose MPI-IO files OMPIO opened (the run report's `run.mpi_io_component`) ignores ROMIO's hints: Open MPI
drops them (the runtime warns; smart mode leaves them out). A recommendation made of them would run as the
default, so each is carried over to OMPIO's counterpart (MCA parameters, process-wide: docs/settings.md) or left
out, saying why:

- collective buffering off (`romio_cb_write` / `romio_cb_read` disable: SmartIO's rule 7) is `fcoll=individual`;
- aggregators (`cb_nodes`, `cb_config_list`'s per node) are `num_aggregators` (at most the processes);
- data sieving and ROMIO's buffer sizes have no counterpart.

And one rule of OMPIO's own: collective transfers to a shared file that are not sequential (each rank's pieces
strided or random, as PnetCDF's and HDF5's noncontiguous selections make them) take the `two_phase` component
(ROMIO's two-phase algorithm inside OMPIO), where this Open MPI offers it: OMPIO's default (`vulcan` in Open
MPI 4.1) measured 1.7-2.7x slower on PnetCDF's strided records here (docs/results.md, "One run is enough to
recommend").
"""

from __future__ import annotations

import json
from typing import Any

from .. import mpiabi
from .insights import Unit

COMPONENT = "ompio"
STRIDED_FCOLL = "two_phase"
SMALL_CALL = 64 * 1024  # bytes a collective HDF5 call moves, below which its synchronization dominates
OFF = "individual"  # OMPIO's fcoll without aggregation: each rank writes its own pieces
WHY_DROPPED = "Open MPI's OMPIO ignores ROMIO's hint and has no counterpart for it"


def component(report: dict | None) -> str | None:
    """The Open MPI io component that opened the run's MPI-IO files (None: not Open MPI, or unknown)."""
    return ((report or {}).get("run") or {}).get("mpi_io_component")


def _offered(fcoll: str) -> bool:
    return fcoll in mpiabi.ompio_offered("fcoll", (fcoll, "vulcan"))


def _aggregators(value: Any, per_node: bool, nodes: int, nprocs: int) -> int | None:
    text = str(value)
    if per_node:  # cb_config_list: "*:N" is N a node
        host, _, n = text.rpartition(":")
        if host != "*" or not n.isdigit():
            return None
        count = int(n) * max(1, nodes)
    else:
        if not text.isdigit():
            return None
        count = int(text)
    return max(1, min(count, max(1, nprocs)))


def translate(flat: dict, nodes: int, nprocs: int) -> tuple[dict, dict]:
    """ROMIO hints as OMPIO's knobs: (the settings with each hint carried over or left out, {hint: why left
    out}). Other layers' knobs stay."""
    out: dict = {}
    dropped: dict = {}
    for key, value in flat.items():
        layer, _, name = key.partition(".")
        if layer != "mpiio":
            out[key] = value
        elif name in ("romio_cb_write", "romio_cb_read") and value == "disable":
            out["ompio.fcoll"] = OFF
        elif name in ("cb_nodes", "cb_config_list"):
            n = _aggregators(value, name == "cb_config_list", nodes, nprocs)
            if n is None:
                dropped[key] = f"{WHY_DROPPED} (no aggregator count in {value!r})"
            else:
                out["ompio.num_aggregators"] = n
        elif name in ("romio_cb_write", "romio_cb_read"):
            dropped[key] = "OMPIO aggregates collective calls by default"
        else:
            dropped[key] = WHY_DROPPED
    return out, dropped


def translate_finding(f: dict, nodes: int, nprocs: int) -> None:
    """A finding's knobs carried over to OMPIO in place: OMPIO's knobs are process-wide, so they name no files."""
    knobs = f.get("knobs") or {}
    if not any(k.startswith("mpiio.") for k in knobs):
        return
    new, dropped = translate(knobs, nodes, nprocs)
    if dropped:
        f.setdefault("left_out", {}).update(dropped)
    if new and all(k.startswith("ompio.") for k in new):
        f["knob_files"] = None
    f["knobs"] = new
    if not new and f.get("level") == "info":
        f["level"] = "ok"  # nothing of it can act here


def _strided_collective(ins: dict) -> list[str]:
    """The directions whose transfers are collective and not sequential."""
    return [
        d
        for d in ("write", "read")
        if ins.get(f"{d}_transfer") in ("collective", "mixed") and ins.get(f"{d}_locality") in ("strided", "random")
    ]


def _finding(u: Unit, glob, code: str, title: str, message: str, reason: str, recommendation: str, knobs: dict):
    return {
        "code": code,
        "level": "info",
        "title": title,
        "message": f"{u.identity.rsplit('/', 1)[-1]}: {message} -> "
        + ", ".join(f"{k}={json.dumps(v)}" for k, v in knobs.items()),
        "evidence": {"identity": u.identity, "insights": u.insights, "reason": reason},
        "files": [f.path for f in u.files][:10],
        "recommendation": recommendation,
        "knobs": knobs,
        "knob_files": None if all(k.startswith("ompio.") for k in knobs) else [glob(u)],
        "keeps": [],
        "scope": [glob(u)],
        "code_change": None,
        "source": 'iotuner\'s measurements under Open MPI 4.1 (docs/results.md, "One run is enough to recommend")',
        "thresholds": {},
    }


def small_collective(units: list[Unit], glob) -> list[dict]:
    """HDF5's collective transfers of small calls under OMPIO: each collective call costs the ranks' exchange of
    their views and a synchronization, which a few KiB of data do not pay for (e3smio_nc4's 3 KiB blocks: 5x
    slower than independent transfers here); the model, which would price it, is not evaluated under OMPIO."""
    out = []
    for u in units:
        ins = u.insights
        size = ins.get("transfer_size")
        coll = [d for d in ("write", "read") if ins.get(f"{d}_transfer") == "collective"]
        if ins.get("library") != "hdf5" or not coll or not isinstance(size, int) or not 0 < size < SMALL_CALL:
            continue
        out.append(
            _finding(
                u,
                glob,
                "ompio-small-collective",
                "Open MPI's OMPIO: independent HDF5 transfers for small collective calls",
                f"collective {' and '.join(coll)}s of {size} bytes a call under OMPIO",
                f"{ins.get(f'{coll[0]}_calls')} collective calls of {size} bytes (below {SMALL_CALL})",
                "let each rank write its pieces without a collective call each",
                {"hdf5.transfer_mode": "independent"},
            )
        )
    return out


def findings(units: list[Unit], glob) -> list[dict]:
    """OMPIO's rules, a finding per unit they fire on (`glob(unit)`: the unit's files as a pattern)."""
    out = small_collective(units, glob)
    if not _offered(STRIDED_FCOLL):
        return out
    for u in units:
        ins = u.insights
        dirs = _strided_collective(ins)
        if ins.get("files") != "shared" or not dirs:
            continue
        name = u.identity.rsplit("/", 1)[-1]
        said = " and ".join(f"{d}s" for d in dirs)
        out.append(
            {
                "code": "ompio-fcoll",
                "level": "info",
                "title": "Open MPI's OMPIO: the two_phase collective component for strided collective transfers",
                "message": f"{name}: collective {said} to a shared file are not sequential, under OMPIO -> "
                f'ompio.fcoll="{STRIDED_FCOLL}"',
                "evidence": {
                    "identity": u.identity,
                    "insights": ins,
                    "reason": f"collective {said}, {', '.join(str(ins.get(f'{d}_locality')) for d in dirs)}",
                },
                "files": [f.path for f in u.files][:10],
                "recommendation": "aggregate strided collective transfers with ROMIO's two-phase algorithm "
                "(OMPIO's default component spreads them in small pieces)",
                "knobs": {"ompio.fcoll": STRIDED_FCOLL},
                "knob_files": None,
                "keeps": [],
                "scope": [glob(u)],
                "code_change": None,
                "source": "iotuner's measurements of PnetCDF records under Open MPI 4.1 (docs/results.md)",
                "thresholds": {},
            }
        )
    return [f for f in out if f["code"] != "ompio-fcoll"] + [f for f in out if f["code"] == "ompio-fcoll"][:1]
