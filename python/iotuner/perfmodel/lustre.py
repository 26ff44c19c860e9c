"""The operations of one collective write in ROMIO's Lustre driver (adio/ad_lustre/ad_lustre_wrcoll.c and
ad_lustre_aggregate.c), rank by rank. ROMIO takes this driver for any file on Lustre; its collective reads stay
on the generic path (twophase.py).

  aggregators  with cb_nodes >= the stripe count: the stripe count x min(cb_nodes / stripe count,
               romio_lustre_co_ratio = 1); else the largest divisor of the stripe count not above cb_nodes,
               so that one OST is written by at most co_ratio aggregators (no extent-lock conflicts)
  domains      stripe-cyclic: stripe s belongs to aggregator s mod aggregators
  requests     as the generic driver: 2 x MPI_Allreduce (8 B: min start, max end), MPI_Alltoall and the
               offset-length lists
  rounds       from the first offset down to its stripe, in groups of aggregators x k stripes: in every round
               each aggregator takes its k stripes of the group (k = cb_buffer_size / stripe size, at least
               1), receives its pieces and writes each stripe from its first to its last received byte
               (reading that range first if the pieces leave holes); adjoining stripes of one aggregator
               are one write
The aggregators and the domains are those of MPICH 3.x's driver (and the Cray MPICH of papers 001 and 004). That
driver buffered one stripe per round (k = 1) whatever cb_buffer_size said; newer versions buffer
cb_buffer_size, several stripes, as modelled here. With cb_buffer_size above the stripe size the older driver
made k times the rounds, so more collectives, for the same bytes per OST; with it equal (paper 004's
settings) they are the same.
"""

from __future__ import annotations

from .exchange import Exchange
from .fileio import File
from .ops import Ops
from .pattern import Request
from .romio_hints import Hints


def write(ops: Ops, call: list[list[Request]], hints: Hints, f: File, lo: int, hi: int) -> None:
    """A collective write's two phases after the interleave check (twophase.collective): lo and hi are the
    first and last byte any rank writes."""
    su = hints.striping_unit
    naggr = hints.write_aggregators

    def where(off: int) -> tuple[int, int]:
        stripe = off // su
        return stripe % naggr, (stripe + 1) * su - 1

    ops.all("allreduce", 8)
    ops.all("allreduce", 8)
    ex = Exchange(ops, call, hints.ranklist[:naggr], where)
    per_round = max(1, hints.cb_buffer_size // su)  # stripes of one aggregator in one round
    group = per_round * naggr
    first = lo // su
    for m in range(-(-(hi // su - first + 1) // group)):
        base = first + m * group
        window: dict[int, list[tuple[int, int]]] = {}
        for s in range(base, base + group):
            a = s % naggr
            if a not in ex.senders:
                continue
            extents = window.setdefault(a, [])
            if extents and extents[-1][0] + extents[-1][1] == s * su:  # one aggregator: its stripes adjoin
                extents[-1] = (extents[-1][0], extents[-1][1] + su)
            else:
                extents.append((s * su, su))
        ex.round(window, True, f, fit=True)
    ops.all("bcast" if naggr == 1 else "allreduce", 4)
