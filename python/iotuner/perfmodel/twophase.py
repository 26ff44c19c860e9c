"""The operations of one collective MPI-IO call in ROMIO's generic two-phase driver
(adio/common/ad_write_coll.c, ad_read_coll.c, ad_aggregate.c), rank by rank.

  every rank   2 x MPI_Allgather (8 B: its start and end offset), then the interleave check;
               not interleaved and romio_cb_* = automatic, or disabled: the independent path (independent.py)
  file domains the accessed range split evenly over cb_nodes aggregators (aligned to striping_unit if set)
  offsets      MPI_Alltoall (4 B: request counts), then Irecv/Isend of the offset-length lists (16 B per
               request) between each rank and each aggregator it has data for, one MPI_Waitall
  rounds       MPI_Allreduce (4 B) of ntimes = ceil(aggregator's extent / cb_buffer_size); then max ntimes
               rounds, in each: MPI_Alltoall (4 B), Irecv/Isend of that round's bytes per pair, MPI_Waitall;
               a writing aggregator reads its window first if the round's data leaves holes
               (read-modify-write) and writes the window; a reading aggregator reads it first
  end (write)  MPI_Bcast (one aggregator) or MPI_Allreduce (4 B) of the error code
On Lustre (Hints.lustre, set by the simulator's Lustre platforms) collective writes take ROMIO's Lustre
driver instead (lustre.py): the same exchange (Exchange) over stripe-cyclic domains.
"""

from __future__ import annotations

from . import independent
from .fileio import File
from .ops import Ops
from .pattern import Request
from .romio_hints import Hints


def file_domains(st: list[int], end: list[int], naggr: int, hints: Hints):
    """ADIOI_Calc_file_domains: (min start, fd_size, fd_start, fd_end); an empty domain is (-1, -1)."""
    lo, hi = min(st), max(end)
    fd_size = max((hi - lo + 1 + naggr - 1) // naggr, hints.min_fdomain_size)
    starts, ends = [], []
    su = hints.striping_unit
    if su > 0:
        starts.append(lo)
        for i in range(naggr):
            e = lo + fd_size * (i + 1)
            front = e % su
            e = e - front if front < su - front else e + su - front
            if i:
                starts.append(ends[-1] + 1)
            ends.append(e - 1)
        ends[-1] = hi
    else:
        for i in range(naggr):
            starts.append(lo + i * fd_size)
            ends.append(lo + (i + 1) * fd_size - 1)
    for i in range(naggr):
        if starts[i] > hi:
            starts[i] = ends[i] = -1
        elif ends[i] > hi:
            ends[i] = hi
    return lo, fd_size, starts, ends


def _owner(off: int, lo: int, fd_size: int, ends: list[int], hints: Hints) -> int:
    if hints.striping_unit > 0:
        i = 0
        while off > ends[i]:
            i += 1
        return i
    return (off - lo + fd_size) // fd_size - 1


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


def domain_of(lo: int, fd_size: int, ends: list[int], hints: Hints):
    """where(off) for split_requests over the generic driver's contiguous file domains."""

    def where(off: int) -> tuple[int, int]:
        a = _owner(off, lo, fd_size, ends, hints)
        return a, ends[a]

    return where


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


def collective(call: list[list[Request]], hints: Hints, direction: str, f: File, trace=None) -> Ops:
    """The operations of one collective call; call[r] = rank r's requests in file order. With a trace
    (python/iotuner/simulate/trace.py), every operation is also recorded in order, with its peer and offset.

    Work is proportional to the (rank, aggregator) pairs that exchange data, not ranks x aggregators, so a
    call of thousands of ranks is counted in a fraction of a second."""
    nprocs = len(call)
    ops = Ops(nprocs, trace)
    writing = direction == "write"
    mode = hints.cb_write if writing else hints.cb_read
    active = [r for r in range(nprocs) if call[r]]
    if not active:
        return ops
    st = [call[r][0][0] if call[r] else 0 for r in range(nprocs)]
    end = [call[r][-1][0] + call[r][-1][1] - 1 if call[r] else -1 for r in range(nprocs)]
    interleaved = False
    if mode != "disable":
        ops.all("allgather", 8)
        ops.all("allgather", 8)
        interleaved = any(st[i] < end[i - 1] and st[i] <= end[i] for i in range(1, nprocs))
    if mode == "disable" or (mode == "automatic" and not interleaved):
        for r in range(nprocs):
            (independent.write if writing else independent.read)(ops, r, call[r], hints, f)
        return ops
    if writing and hints.lustre and hints.striping_unit > 0:
        from . import lustre

        lustre.write(ops, call, hints, f, min(st[r] for r in active), max(end[r] for r in active))
        return ops

    naggr = hints.cb_nodes
    lo, fd_size, _, ends = file_domains([st[r] for r in active], [end[r] for r in active], naggr, hints)
    ex = Exchange(ops, call, hints.ranklist, domain_of(lo, fd_size, ends, hints))
    # rounds per aggregator
    cb = hints.cb_buffer_size
    plan = {}  # aggregator index -> (st_loc, end_loc, ntimes)
    for a in range(naggr):
        pieces = ex.pieces.get(a)
        if pieces:
            s = pieces[0][0]
            e = max(o + n - 1 for o, n, _ in pieces)
            plan[a] = (s, e, (e - s + cb) // cb)
        else:
            plan[a] = (-1, -1, 0)
    ops.all("allreduce", 4)
    rounds = max(p[2] for p in plan.values())
    live = [a for a in range(naggr) if plan[a][2]]
    for m in range(rounds):
        window = {}
        for a in live:
            s, e, nt = plan[a]
            window[a] = [(s + m * cb, min(cb, e - s + 1 - m * cb))]
        live = [a for a in live if plan[a][2] > m + 1]
        ex.round(window, writing, f)
    if writing:
        ops.all("bcast" if hints.cb_nodes == 1 else "allreduce", 4)
    return ops


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
            a_me = self.index_of.get(r)
            for i in self.senders.get(a_me, ()) if a_me is not None else ():
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
                got, segs = self.held(a, off, size)
                if not segs:
                    continue
                for i, n in got.items():
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
            a_me = self.index_of.get(r)
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
