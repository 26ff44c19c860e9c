"""The POSIX calls of ROMIO's generic contiguous read and write (ADIOI_GEN_ReadContig / WriteContig).

A write is one pwrite. A read loops on pread until it has every byte or pread returns 0: a read that starts
before the end of the file and runs past it is two preads (the short one, then the 0 at the end)."""

from __future__ import annotations

from .ops import Ops


class File:
    """The file's size as the simulated calls extend it."""

    def __init__(self, size: int = 0):
        self.size = size

    def write(self, ops: Ops, rank: int, off: int, n: int) -> None:
        if n > 0:
            ops.add(rank, "pwrite", n, offset=off)
            self.size = max(self.size, off + n)

    def read(self, ops: Ops, rank: int, off: int, n: int) -> None:
        if n <= 0:
            return
        ops.add(rank, "pread", n, offset=off)
        got = min(n, max(0, self.size - off))
        if 0 < got < n:
            ops.add(rank, "pread", n - got, offset=off + got)
