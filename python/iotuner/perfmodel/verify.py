"""Predicted against measured operations (counting mode, `iotuner run --count-ops`): the check that the model
counts what ROMIO does."""

from __future__ import annotations

from dataclasses import dataclass

from .count import phase_ops
from .ops import Ops
from .pattern import from_access
from .romio_hints import Hints


@dataclass
class Mismatch:
    phase: int
    direction: str
    rank: int
    predicted: dict
    measured: dict

    def __str__(self) -> str:
        keys = sorted(set(self.predicted) | set(self.measured))
        diff = ", ".join(
            f"{op} {b} B: predicted {self.predicted.get((op, b), 0)}, measured {self.measured.get((op, b), 0)}"
            for op, b in keys
            if self.predicted.get((op, b), 0) != self.measured.get((op, b), 0)
        )
        return f"phase {self.phase} ({self.direction}) rank {self.rank}: {diff}"


def compare(rep, hints: dict, ranks_per_node: int | None = None) -> tuple[int, list[Mismatch]]:
    """(phases checked, mismatches) over every collective MPI-IO phase of a counting-mode report, in order;
    a phase starts with the file as large as the phases before it left it."""
    checked, out = 0, []
    size: dict = {}
    for i, phase in enumerate(rep.phases):
        acc = rep.access(i)
        if not acc:
            continue
        measured = Ops.from_access(acc)
        for direction in ("write", "read"):
            pat = from_access(acc, direction)
            if pat is None:
                continue
            h = Hints.from_mapping(hints, pat.nprocs, ranks_per_node)
            predicted = phase_ops(pat, h, size.get(phase["file"], 0))
            checked += 1
            for r in range(pat.nprocs):
                if predicted.ranks[r] != measured.ranks[r]:
                    out.append(Mismatch(i, direction, r, dict(predicted.ranks[r]), dict(measured.ranks[r])))
            ends = [c[-1][0] + c[-1][1] for rp in pat.ranks for c in rp.calls if c]
            size[phase["file"]] = max([size.get(phase["file"], 0)] + ends)
    return checked, out
