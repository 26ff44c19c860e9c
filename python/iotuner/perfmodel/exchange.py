"""The data exchange of ROMIO's two-phase I/O, shared by its generic driver (twophase.py) and its Lustre
driver (lustre.py): each rank's requests cut by the aggregators' file domains, the offset lists sent to the
aggregators, then round by round the messages that move the data and the aggregators' file calls."""

from __future__ import annotations

from .fileio import File
from .ops import Ops
from .pattern import Request


def split_requests(reqs: list[Request], where) -> dict[int, list[Request]]:
    """ADIOI_Calc_my_req: a rank's requests cut where file domains end, by aggregator index; where(off) is
    (the aggregator index of the byte at off, the last byte of its domain from there)."""
    out: dict[int, list[Request]] = {}
    for off, n in reqs:
        while n > 0:
            a, last = where(off)
            take = min(n, last + 1 - off)
            out.setdefault(a, []).append((off, take))
            off, n = off + take, n - take
    return out


def _has_hole(segments: list[Request], off: int, size: int) -> bool:
    """ROMIO's check before writing a round: do the received pieces cover [off, off + size) without a gap?"""
    if not segments:
        return False
    segs = sorted(segments)
    if segs[0][0] != off:
        return True
    start, length = segs[0]
    for s, n in segs[1:]:
        if s > start + length:
            return True
        length = max(length, s + n - start)
    return length != size


class Exchange:
    """The data exchange of a two-phase call, given the aggregators and their file domains: each rank's
    requests by aggregator, the offset lists sent to the aggregators (ADIOI_Calc_others_req), then round by
    round the pieces each aggregator's window holds, the messages that move them and the file calls."""

    def __init__(self, ops: Ops, call: list[list[Request]], aggregators, where):
        self.ops = ops
        self.agg_rank = list(aggregators)
        self.index_of = {rank: a for a, rank in enumerate(self.agg_rank)}
        nprocs = len(call)
        self.mine = [split_requests(call[r], where) for r in range(nprocs)]
        self.senders: dict[int, list[int]] = {}  # aggregator index -> the ranks with data for it, in rank order
        for i in range(nprocs):
            for a in self.mine[i]:
                self.senders.setdefault(a, []).append(i)
        ops.all("alltoall", 4)
        for r in range(nprocs):
            n = 0
            a_me = self.index_of.get(r, -1)  # -1: not an aggregator, and no one sends to it
            for i in self.senders.get(a_me, ()):
                ops.add(r, "irecv", 16 * len(self.mine[i][a_me]), peer=i)
                n += 1
            for a, pieces in self.mine[r].items():
                ops.add(r, "isend", 16 * len(pieces), peer=self.agg_rank[a])
                n += 1
            if n:
                ops.add(r, "waitall", n)
        # each aggregator's pieces in file order, and the first one its next window can overlap
        self.pieces = {a: sorted((o, n, i) for i in self.senders[a] for o, n in self.mine[i][a]) for a in self.senders}
        self.cursor = dict.fromkeys(self.senders, 0)

    def held(self, a: int, off: int, size: int) -> tuple[dict[int, int], list[Request]]:
        """Aggregator a's window [off, off + size): bytes per rank with data in it, and the pieces it holds.
        Windows of one aggregator come in file order; only aggregators with data have windows."""
        flow: dict[int, int] = {}
        segs: list[Request] = []
        mine_a, j = self.pieces[a], self.cursor[a]
        while j < len(mine_a) and mine_a[j][0] + mine_a[j][1] <= off:
            j += 1
        self.cursor[a] = j
        while j < len(mine_a) and mine_a[j][0] < off + size:
            o, n, i = mine_a[j]
            lo, hi = max(o, off), min(o + n, off + size)
            if lo < hi:
                flow[i] = flow.get(i, 0) + hi - lo
                segs.append((lo, hi - lo))
            j += 1
        return flow, segs

    def round(self, window: dict[int, list[tuple[int, int]]], writing: bool, f: File, fit: bool = False) -> None:
        """One round: every rank's MPI_Alltoall, then the aggregators' windows (aggregator index -> its extents
        (offset, size) in file order) exchanged and written or read, one message per rank and aggregator.
        fit: an extent shrinks to the data it holds (a driver that writes from its first to its last received
        byte)."""
        ops = self.ops
        flow: dict[int, dict[int, int]] = {}
        held: dict[int, list] = {}  # aggregator index -> [(offset, size, pieces)] of its extents with data
        for a, extents in window.items():
            flow[a], held[a] = {}, []
            for off, size in extents:
                by_rank, segs = self.held(a, off, size)
                if not segs:
                    continue
                for i, n in by_rank.items():
                    flow[a][i] = flow[a].get(i, 0) + n
                if fit:
                    off = min(o for o, _ in segs)
                    size = max(o + n for o, n in segs) - off
                held[a].append((off, size, segs))
        ops.all("alltoall", 4)
        # the ranks with a window or a message this round; every other rank's MPI_Waitall has no request
        busy = sorted({self.agg_rank[a] for a in window} | {i for a in window for i in flow[a]})
        ops.all_but(busy, "waitall", 0)
        for r in busy:
            a_me = self.index_of.get(r, -1)  # -1: not an aggregator
            mine_here = a_me in window
            incoming = outgoing = 0
            if writing:
                if mine_here:
                    for i, got in flow[a_me].items():
                        ops.add(r, "irecv", got, peer=i)
                        incoming += 1
                    for off, size, segs in held[a_me]:
                        if _has_hole(segs, off, size):
                            f.read(ops, r, off, size)
                for a in self.mine[r]:
                    sent = flow[a].get(r, 0) if a in window else 0
                    if sent:
                        ops.add(r, "isend", sent, peer=self.agg_rank[a])
                        outgoing += 1
                ops.add(r, "waitall", incoming + outgoing)
                if mine_here:
                    for off, size, _ in held[a_me]:
                        f.write(ops, r, off, size)
            else:
                if mine_here:
                    for off, size, _ in held[a_me]:
                        f.read(ops, r, off, size)
                for a in self.mine[r]:
                    got = flow[a].get(r, 0) if a in window else 0
                    if got:
                        ops.add(r, "irecv", got, peer=self.agg_rank[a])
                        incoming += 1
                if mine_here:
                    for i, sent in flow[a_me].items():
                        ops.add(r, "isend", sent, peer=i)
                        outgoing += 1
                if incoming:
                    ops.add(r, "waitall", incoming)
                ops.add(r, "waitall", outgoing)
