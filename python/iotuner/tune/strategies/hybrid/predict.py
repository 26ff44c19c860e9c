"""Predicted time of a run under a hint setting: the phases' counted operations priced by the calibration.

A rank's time in a phase is the sum of its operations' costs (collectives at the phase's rank count; a message
half an exchange round of its size, paid at each end; file writes at the number of ranks writing in the phase,
as a first write when the phase's file was new); the phase takes as long as its slowest rank (the collectives
of every round keep the ranks in step). Phases add up.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...space import SearchSpace, complete
from .calibration import Calibration
from .count import phase_ops
from .hints import Hints
from .ops import Ops
from .pattern import Pattern, from_access

COLLECTIVES = ("allgather", "alltoall", "allreduce", "bcast")


def ops_time(ops: Ops, cal: Calibration, new_file: bool) -> float:
    nprocs = len(ops.ranks)
    writers = max(1, sum(1 for c in ops.ranks if any(o == "pwrite" for o, _ in c)))
    readers = max(1, sum(1 for c in ops.ranks if any(o == "pread" for o, _ in c)))
    cache: dict = {}

    def cost(op, b):
        key = (op, b)
        if key not in cache:
            if op in COLLECTIVES:
                cache[key] = cal.cost(op, b, nprocs=nprocs)
            elif op in ("isend", "irecv"):
                cache[key] = cal.cost("p2p", b, nprocs=min(2, nprocs)) / 2
            elif op == "pwrite":
                cache[key] = cal.cost("pwrite", b, writers=writers, first=new_file)
            elif op == "pread":
                cache[key] = cal.cost("pread", b, writers=readers)
            else:  # waitall and the rest: inside the exchanges they complete
                cache[key] = 0.0
        return cache[key]

    return max((sum(n * cost(op, b) for (op, b), n in c.items()) for c in ops.ranks), default=0.0)


@dataclass
class PhaseModel:
    """What the model needs of one measured phase: its pattern per direction, the hints it ran with."""
    index: int
    patterns: list[Pattern]
    hints: dict  # the MPI-IO hints read back from the run
    new_file: bool

    def time(self, cal: Calibration, override: dict, nodes: list[int] | None = None) -> float:
        merged = {**self.hints, **override}
        total, size = 0.0, 0
        for pat in self.patterns:
            h = Hints.from_mapping(merged, pat.nprocs)
            end = max([0] + [c[-1][0] + c[-1][1] for r in pat.ranks for c in r.calls if c])
            writing = pat.direction == "write"
            start = (0 if self.new_file else end) if writing else max(size, end)  # reads find their data there
            ops = phase_ops(pat, h, start)
            total += ops_time(ops, cal, self.new_file and writing)
            size = max(size, end)
        return total


def phases_of(report: dict) -> list[PhaseModel]:
    """The modelled phases of a run report: those with collective MPI-IO calls."""
    from ....report import parse
    rep = parse(report)
    out = []
    for i, ph in enumerate(rep.phases):
        acc = rep.access(i)
        pats = [p for p in (from_access(acc, d) for d in ("write", "read")) if p is not None]
        if pats:
            out.append(PhaseModel(i, pats, dict(ph.get("mpi_hints") or {}), bool(ph.get("created"))))
    return out


def hint_overrides(flat: dict, nodes: int = 1) -> dict:
    """A point's MPI-IO hints ({"mpiio.knob": value} settings, with the knobs they require) as hint strings."""
    out = {}
    for key, value in complete(flat, nodes).items():
        layer, _, knob = key.partition(".")
        if layer == "mpiio":
            out[knob] = str(value)
    return out


def modelled(space: SearchSpace) -> list[str]:
    """The dimensions of a space the model predicts: every knob an MPI-IO hint."""
    return [d.name for d in space.dimensions if all(k.startswith("mpiio.") for k in d.knobs())]


def rank_points(space: SearchSpace, phases: list[PhaseModel], cal: Calibration, fixed: dict[str, str],
                nodes: int = 1) -> list[tuple[float, dict[str, str]]]:
    """Every point of the modelled dimensions (the others held at `fixed`), with its predicted time, fastest
    first."""
    import itertools
    dims = [space.dimension(n) for n in modelled(space)]
    out = []
    for labels in itertools.product(*(d.labels for d in dims)):
        point = {**fixed, **dict(zip((d.name for d in dims), labels))}
        flat = space.point_settings(space.decode(point))
        override = hint_overrides(flat, nodes)
        t = sum(ph.time(cal, override) for ph in phases)
        out.append((t, point))
    out.sort(key=lambda x: x[0])
    return out
