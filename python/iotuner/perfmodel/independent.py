"""ROMIO's independent path of a collective call (romio_cb_write / romio_cb_read disabled, or automatic on
accesses that do not interleave): each rank alone, through ADIOI_GEN_WriteStrided / ReadStrided.

One contiguous request is one contiguous call. Several requests are written piece by piece when data sieving is
disabled (romio_ds_write / romio_ds_read = disable, the "naive" path), else through a sieve buffer of
ind_wr_buffer_size / ind_rd_buffer_size bytes: each window is read first (for writes: read-modify-write),
then written back whole (ROMIO's ADIOI_BUFFERED_WRITE / ADIOI_BUFFERED_READ)."""

from __future__ import annotations

from .fileio import File
from .ops import Ops
from .pattern import Request
from .romio_hints import Hints


def write(ops: Ops, rank: int, reqs: list[Request], hints: Hints, f: File) -> None:
    if not reqs:
        return
    if len(reqs) == 1 or hints.ds_write == "disable":
        for off, n in reqs:
            f.write(ops, rank, off, n)
        return
    end = reqs[-1][0] + reqs[-1][1] - 1
    wb_off = wb_len = 0
    for off, n in reqs:
        if off >= wb_off + wb_len:
            if wb_len:
                f.write(ops, rank, wb_off, wb_len)
            wb_off, wb_len = off, min(hints.ind_wr_buffer_size, end - off + 1)
            f.read(ops, rank, wb_off, wb_len)
        done = min(n, wb_off + wb_len - off)
        while done != n:
            f.write(ops, rank, wb_off, wb_len)
            n -= done
            wb_off += wb_len
            wb_len = min(hints.ind_wr_buffer_size, end - wb_off + 1)
            f.read(ops, rank, wb_off, wb_len)
            done = min(n, wb_len)
    f.write(ops, rank, wb_off, wb_len)


def read(ops: Ops, rank: int, reqs: list[Request], hints: Hints, f: File) -> None:
    if not reqs:
        return
    if len(reqs) == 1 or hints.ds_read == "disable":
        for off, n in reqs:
            f.read(ops, rank, off, n)
        return
    end = reqs[-1][0] + reqs[-1][1] - 1
    rb_off = rb_len = 0
    for off, n in reqs:
        if off >= rb_off + rb_len:
            rb_off, rb_len = off, min(hints.ind_rd_buffer_size, end - off + 1)
            f.read(ops, rank, rb_off, rb_len)
        while n > rb_off + rb_len - off:  # the request runs past the window: keep its start, read on
            partial = rb_off + rb_len - off
            rb_off += rb_len - partial
            more = min(hints.ind_rd_buffer_size, end - rb_off - partial + 1)
            rb_len = partial + more
            f.read(ops, rank, rb_off + partial, more)
