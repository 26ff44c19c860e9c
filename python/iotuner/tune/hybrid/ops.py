"""Counted operations: per rank, how many calls of each operation with each size.

The names are those of the runtime's counting mode (native/include/iotuner/ops.h): the MPI calls ROMIO makes
(allgather, alltoall, allreduce, bcast, isend, irecv, waitall, ...) and the POSIX calls (pwrite, pread).
For collectives the size is this rank's send bytes; for waitall, the number of requests.
"""

from __future__ import annotations

from collections import Counter

Op = tuple[str, int]


class Ops:
    """Per rank, a Counter of (operation, bytes) -> calls. A trace, when given, also receives every operation
    in the order the ranks make them: trace.collective(op, bytes) for a collective of every rank,
    trace.local(rank, op, bytes, peer, offset) for the others (peer: the other rank of a message; offset: the
    file offset of a pwrite or pread)."""

    def __init__(self, nprocs: int, trace=None):
        self.ranks: list[Counter] = [Counter() for _ in range(nprocs)]
        self.trace = trace

    def add(self, rank: int, op: str, nbytes: int, calls: int = 1, peer: int = -1, offset: int = -1) -> None:
        self.ranks[rank][(op, int(nbytes))] += calls
        if self.trace is not None:
            self.trace.local(rank, op, int(nbytes), peer, offset)

    def all(self, op: str, nbytes: int) -> None:
        """One call on every rank (a collective)."""
        for c in self.ranks:
            c[(op, int(nbytes))] += 1
        if self.trace is not None:
            self.trace.collective(op, int(nbytes))

    def merge(self, other: "Ops") -> "Ops":
        for mine, theirs in zip(self.ranks, other.ranks):
            mine.update(theirs)
        return self

    def total(self, op: str) -> tuple[int, int]:
        """(calls, bytes) of one operation over all ranks."""
        calls = sum(n for c in self.ranks for (o, _), n in c.items() if o == op)
        nbytes = sum(b * n for c in self.ranks for (o, b), n in c.items() if o == op)
        return calls, nbytes

    def as_lists(self) -> list[list[dict]]:
        return [[{"op": o, "bytes": b, "calls": n} for (o, b), n in sorted(c.items())] for c in self.ranks]

    @classmethod
    def from_access(cls, ranks: list[dict]) -> "Ops":
        """The counts the runtime measured (the `operations` of a phase's access entries)."""
        out = cls(max((e["rank"] for e in ranks), default=-1) + 1)
        for e in ranks:
            for o in e.get("operations", []):
                out.add(e["rank"], o["op"], o["bytes"], o["calls"])
        return out
