"""The engine's input for one settings document: the hybrid model's operations, in order, as trace lines.

The hybrid model's counting code (python/iotuner/perfmodel) walks ROMIO's two-phase and independent paths
call by call (a phase of independent MPI-IO or POSIX calls takes the independent path whatever the hints say);
with a Trace it also reports each operation in order, with the message's peer and the file
call's offset. Collectives are priced here by the platform (they synchronize every rank); everything else
is replayed by the engine (native/src/simulate/iosim.cpp describes the line format).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from .. import native
from ..perfmodel.count import phase_ops
from ..perfmodel.predict import hint_overrides
from ..perfmodel.romio_hints import Hints
from .platform import Platform
from .workload import Phase

LOCAL = {"isend": "s", "irecv": "r", "pwrite": "W", "pread": "R"}


class Trace:
    """Receives the counting code's operations (perfmodel/ops.py) and writes them as engine lines."""

    def __init__(self, platform: Platform, nprocs: int):
        self.platform, self.nprocs = platform, nprocs
        self.lines: list[str] = []
        self._cost: dict[tuple[str, int], str] = {}

    def collective(self, op: str, nbytes: int) -> None:
        key = (op, nbytes)
        if key not in self._cost:
            self._cost[key] = f"C {self.platform.collective_seconds(op, nbytes, self.nprocs):.9g}"
        self.lines.append(self._cost[key])

    def local(self, rank: int, op: str, nbytes: int, peer: int, offset: int) -> None:
        if op == "waitall":
            if nbytes:  # MPI_Waitall of nothing: no time
                self.lines.append(f"w {rank} {nbytes}")
        elif op in ("isend", "irecv"):
            if peer == rank:  # an aggregator's own data: one copy into (or out of) the collective buffer
                if op == "irecv":
                    self.lines.append(f"x {rank} {round(self.platform.self_copy_seconds(nbytes) * 1e9)}")
                return
            self.lines.append(f"{LOCAL[op]} {rank} {nbytes} {peer}")
        elif op in LOCAL:
            self.lines.append(f"{LOCAL[op]} {rank} {nbytes} {offset}")


@dataclass
class Setup:
    """What one settings document means on a platform at a scale: ROMIO's hints and the file layout."""

    hints: Hints
    stripe_count: int
    stripe_size: int
    mpiio: dict  # the hint strings in effect


def _number(value, what: str) -> int:

    try:
        return int(native.core().parse_size(str(value)))
    except ValueError:
        raise ValueError(f"{what}: not a size: {value!r}") from None


def setup(flat: dict, base_hints: dict, platform: Platform, ranks: int, nodes: int) -> Setup:
    """The settings (`{"layer.knob": value}`) on top of the application's own hints and the platform's
    defaults: the stripe layout (lustre.* or striping_* hints, else the platform's default; -1 is every OST),
    the aggregators (the settings', else the platform's default: one per node, or one per stripe)."""
    # ROMIO of MPICH 4.2 reads back striping_factor=0 and striping_unit=0 on a file system it does not stripe: unset
    base_hints = {
        k: v for k, v in base_hints.items() if not (k in ("striping_factor", "striping_unit") and str(v) == "0")
    }
    merged = {**base_hints, **hint_overrides(flat, nodes)}
    count = flat.get("lustre.stripe_count", merged.get("striping_factor", platform.stripe_count))
    size = flat.get("lustre.stripe_size", merged.get("striping_unit", platform.stripe_size))
    osts = platform.storage.get("osts", 1)
    count = osts if int(_number(count, "stripe count")) < 0 else min(osts, max(1, _number(count, "stripe count")))
    size = _number(size, "stripe size")
    if platform.lustre:
        merged["striping_unit"] = str(size)  # a Lustre driver knows the stripe size: domains on stripe boundaries
        merged["striping_factor"] = str(count)
        if "cb_nodes" not in merged and platform.cb_nodes_default == "stripe_count":
            merged["cb_nodes"] = str(count)
            merged.setdefault("cb_config_list", f"*:{math.ceil(count / nodes)}")
    per_node = -(-ranks // nodes)
    # on Lustre, ROMIO's Lustre driver takes the collective writes (perfmodel/lustre.py)
    hints = Hints.from_mapping(merged, ranks, per_node, lustre=platform.lustre)
    return Setup(hints, count, size, merged)


def engine_input(
    platform: Platform, ranks: int, nodes: int, phases: list[Phase], flat: dict, as_run: bool = False
) -> tuple[str, Setup]:
    """The engine's input for these phases under one settings document (as_run: the measured run's own
    settings under `flat`)."""
    setups = []
    body: list[str] = []
    for i, ph in enumerate(phases):
        settings = {**ph.run_settings, **flat} if as_run else flat
        if not ph.collective_under(settings):  # independent calls: ROMIO's independent path whatever the hints say
            settings = {**settings, "mpiio.romio_cb_write": "disable", "mpiio.romio_cb_read": "disable"}
        s = setup(settings, ph.app_hints, platform, ranks, nodes)
        setups.append(s)
        trace = Trace(platform, ranks)
        body.append(f"P {i}")
        phase_ops(ph.pattern, s.hints, ph.file_size, trace)
        body += trace.lines
        body.append("E")
    first = setups[0]
    new_file = any(p.new_file for p in phases)
    header = platform.header(
        ranks, nodes, first.stripe_count, first.stripe_size, new_file, any(p.per_process for p in phases)
    )
    return json.dumps(header, separators=(",", ":")) + "\n" + "\n".join(body) + "\n", first
