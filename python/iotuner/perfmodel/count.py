"""The operations of a whole phase: every collective call of its pattern, in order, on one file."""

from __future__ import annotations

from .fileio import File
from .ops import Ops
from .pattern import Pattern
from .romio_hints import Hints
from .twophase import collective


def phase_ops(pattern: Pattern, hints: Hints, file_size: int = 0, trace=None, memo: dict | None = None) -> Ops:
    """Predicted operations per rank; file_size is the file's size when the phase starts (0: a new file).
    trace: receives every operation in order (Ops). memo: a dict kept across calls (any hints, any pattern)
    in which a call shaped like one counted before is looked up instead of counted again (without a trace)."""
    f = File(file_size)
    total = Ops(pattern.nprocs)
    if trace is not None:
        for k in range(pattern.ncalls):
            total.merge(collective(pattern.call(k), hints, pattern.direction, f, trace))
        return total
    # one memo per direction and hints, keyed by small numbers: a phase of thousands of calls looks each up
    calls = (memo if memo is not None else {}).setdefault((pattern.direction, hints), {})
    uses: dict = {}
    for k, (lo, hi, shape) in enumerate(pattern.shapes()):
        if shape is None:
            continue
        key = _call_ops(pattern, k, lo, hi, shape, hints, f, calls)
        uses[key] = uses.get(key, 0) + 1
    for key, n in uses.items():
        total.merge(calls[key][0], n)
    return total


def _call_ops(pattern: Pattern, k: int, lo: int, hi: int, shape: int, hints: Hints, f: File, calls: dict):
    """The memo key of the k-th collective call's operations, counting them first if the memo lacks them; f
    grows as the call's writes extend it. A call's operations depend on its requests only relative to its
    first offset (file domains, rounds and sieve windows all start there), except for striping_unit's
    alignment, the Lustre driver's first aggregator and the file's size, which are in the key."""
    known = min(max(f.size - lo, 0), hi - lo)  # how much of the call's range the file holds already
    su = hints.striping_unit
    # on Lustre the stripe a call starts on also picks its aggregators (stripe s: aggregator s mod their count)
    turn = (lo // su) % hints.write_aggregators if hints.lustre and su > 0 else 0
    key = (shape, lo % su if su > 0 else 0, known, turn)
    hit = calls.get(key)
    if hit is None:
        g = File(lo + known)
        ops = collective(pattern.call(k), hints, pattern.direction, g)
        hit = calls[key] = (ops, g.size - lo if g.size > lo + known else None)
    if hit[1] is not None:
        f.size = max(f.size, lo + hit[1])
    return key
