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
driver instead (lustre.py): the same exchange (exchange.py) over stripe-cyclic domains.
"""

from __future__ import annotations

from . import independent, lustre
from .exchange import Exchange
from .fileio import File
from .ops import Ops
from .pattern import Request
from .romio_hints import Hints


def file_domains(st: list[int], end: list[int], naggr: int, hints: Hints):
    """ADIOI_Calc_file_domains: (min start, fd_size, fd_start, fd_end); an empty domain is (-1, -1)."""
    lo, hi = min(st), max(end)
    fd_size = max((hi - lo + 1 + naggr - 1) // naggr, hints.min_fdomain_size)
    starts: list[int] = []
    ends: list[int] = []
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


def domain_of(lo: int, fd_size: int, ends: list[int], hints: Hints):
    """where(off) for split_requests over the generic driver's contiguous file domains."""

    def where(off: int) -> tuple[int, int]:
        a = _owner(off, lo, fd_size, ends, hints)
        return a, ends[a]

    return where


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
