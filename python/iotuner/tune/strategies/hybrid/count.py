"""The operations of a whole phase: every collective call of its pattern, in order, on one file."""

from __future__ import annotations

from .fileio import File
from .hints import Hints
from .ops import Ops
from .pattern import Pattern
from .twophase import collective


def phase_ops(pattern: Pattern, hints: Hints, file_size: int = 0, trace=None) -> Ops:
    """Predicted operations per rank; file_size is the file's size when the phase starts (0: a new file).
    trace: receives every operation in order (Ops)."""
    f = File(file_size)
    total = Ops(pattern.nprocs)
    for k in range(pattern.ncalls):
        total.merge(collective(pattern.call(k), hints, pattern.direction, f, trace))
    return total
