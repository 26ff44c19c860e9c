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
    file offset of a pwrite or pread). Calls every rank makes are kept once (`common`), so a phase of
    thousands of ranks and rounds is counted in time proportional to the ranks that move data."""

    def __init__(self, nprocs: int, trace=None):
        self.own: list[Counter] = [Counter() for _ in range(nprocs)]
        self.common: Counter = Counter()
        self.trace = trace

    @property
    def nprocs(self) -> int:
        return len(self.own)

    @property
    def ranks(self) -> list[Counter]:
        """Every rank's counts (a fresh list: changing it changes nothing)."""
        out = []
        for c in self.own:
            merged = Counter(self.common)
            for key, n in c.items():
                merged[key] += n
            out.append(Counter({k: n for k, n in merged.items() if n}))
        return out

    def add(self, rank: int, op: str, nbytes: int, calls: int = 1, peer: int = -1, offset: int = -1) -> None:
        self.own[rank][(op, int(nbytes))] += calls
        if self.trace is not None:
            self.trace.local(rank, op, int(nbytes), peer, offset)

    def all(self, op: str, nbytes: int) -> None:
        """One call on every rank (a collective)."""
        self.common[(op, int(nbytes))] += 1
        if self.trace is not None:
            self.trace.collective(op, int(nbytes))

    def all_but(self, ranks, op: str, nbytes: int) -> None:
        """One call, traced as nothing, on every rank but `ranks` (MPI_Waitall of no request on the ranks that
        have no message in a round)."""
        key = (op, int(nbytes))
        self.common[key] += 1
        for r in ranks:
            self.own[r][key] -= 1

    def merge(self, other: Ops, times: int = 1) -> Ops:
        """Adds another's counts (times over: a call made that many times)."""
        for mine, theirs in zip(self.own, other.own):
            for key, n in theirs.items():
                mine[key] += n * times
        for key, n in other.common.items():
            self.common[key] += n * times
        return self

    def total(self, op: str) -> tuple[int, int]:
        """(calls, bytes) of one operation over all ranks."""
        ranks = self.ranks
        calls = sum(n for c in ranks for (o, _), n in c.items() if o == op)
        nbytes = sum(b * n for c in ranks for (o, b), n in c.items() if o == op)
        return calls, nbytes

    def as_lists(self) -> list[list[dict]]:
        return [[{"op": o, "bytes": b, "calls": n} for (o, b), n in sorted(c.items())] for c in self.ranks]

    @classmethod
    def from_access(cls, ranks: list[dict]) -> Ops:
        """The counts the runtime measured (the `operations` of a phase's access entries)."""
        out = cls(max((e["rank"] for e in ranks), default=-1) + 1)
        for e in ranks:
            for o in e.get("operations", []):
                out.add(e["rank"], o["op"], o["bytes"], o["calls"])
        return out
