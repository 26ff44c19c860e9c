"""A phase's collective access pattern, rebuilt from the run report's `access` section.

Each rank's summary (docs/report.md, Access patterns) describes its calls exactly when they are regular:
every call has the same number of equal requests at one stride, and successive calls start one step apart.
That is the shape of block, strided and IOR-like patterns; anything else is rebuilt approximately (each rank's
average call in a slot of its own in each call's region, in rank order: one request, or when the call is larger
than the rank's largest request, that many pieces interleaved with the other ranks') and marked inexact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

Request = tuple[int, int]  # (file offset, length)
SHAPES: dict[tuple, int] = {}  # a call's requests relative to its first offset -> its shape number


@dataclass
class RankPattern:
    rank: int
    calls: list[list[Request]] = field(default_factory=list)
    exact: bool = True

    @property
    def bytes(self) -> int:
        return sum(n for call in self.calls for _, n in call)


@dataclass
class Pattern:
    """One direction of one phase: every rank's collective calls, as ROMIO sees their requests."""

    direction: str  # "write" or "read"
    ranks: list[RankPattern]
    _shapes: list | None = field(default=None, repr=False, compare=False)

    @property
    def nprocs(self) -> int:
        return len(self.ranks)

    @property
    def ncalls(self) -> int:
        return max((len(r.calls) for r in self.ranks), default=0)

    @property
    def exact(self) -> bool:
        return all(r.exact for r in self.ranks)

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.ranks)

    def call(self, k: int) -> list[list[Request]]:
        """The requests of every rank in its k-th collective call (a rank with fewer calls: none)."""
        return [r.calls[k] if k < len(r.calls) else [] for r in self.ranks]

    def shapes(self) -> list[tuple[int, int, int | None]]:
        """Per call, (its first offset, its end, its shape): calls whose requests are the same relative to
        their first offset share a shape number, in this pattern and every other (None: a call no rank makes).
        Computed once."""
        if self._shapes is None:
            self._shapes = []
            for k in range(self.ncalls):
                call = self.call(k)
                starts = [reqs[0][0] for reqs in call if reqs]
                if not starts:
                    self._shapes.append((0, 0, None))
                    continue
                lo = min(starts)
                hi = max(reqs[-1][0] + reqs[-1][1] for reqs in call if reqs)
                shape = tuple(tuple((o - lo, n) for o, n in reqs) for reqs in call)
                self._shapes.append((lo, hi, SHAPES.setdefault(shape, len(SHAPES))))
        return self._shapes


def rank_calls(d: dict, rank: int = 0, nprocs: int = 1, slot: int = 0) -> tuple[list[list[Request]], bool]:
    """(a rank's calls, exact) from its summary in the report's `access` section (docs/report.md). A summary
    without an exact shape (calls that differ, or views not flattened: no offsets) is rebuilt as the rank's
    average call in a slot of its own in each call's region, in rank order (rank of nprocs, slot: the largest
    average call among the ranks), so no two ranks write the same bytes."""
    calls, nreq = d["calls"], d.get("call_requests")
    size, stride, step = d.get("request_min"), d.get("request_stride"), d.get("call_step")
    if exact_shape(d):
        first = d["offset"]
        step, stride, nreq, size = cast(int, step), cast(int, stride), cast(int, nreq), cast(int, size)  # all known
        return [[(first + k * step + j * stride, size) for j in range(nreq)] for k in range(calls)], True
    per_call = average_call(d)
    slot = max(slot, per_call)
    largest = d.get("request_max") or per_call
    if nprocs > 1 and largest < per_call:
        # a call of several requests: file gaps between them, which in a collective call are the other ranks'
        # pieces (a [levels, cells] field split by cells): ROMIO's automatic sees them interleave
        pieces = -(-per_call // largest)
        piece = -(-slot // pieces)
        return [
            [(k * nprocs * slot + (j * nprocs + rank) * piece, min(piece, per_call - j * piece)) for j in range(pieces)]
            for k in range(calls)
        ], False
    return [[(k * nprocs * slot + rank * slot, per_call)] for k in range(calls)], False


def exact_shape(d: dict) -> bool:
    """Every call the same number of equal requests at one stride, calls one step apart, offsets known."""
    return (
        d.get("unflattened_calls", 0) == 0
        and d.get("call_requests") is not None
        and d.get("request_min") is not None
        and d["request_min"] == d.get("request_max")
        and d.get("request_stride") is not None
        and d.get("call_step") is not None
        and d.get("offset") is not None
    )


def average_call(d: dict) -> int:
    return max(1, d["bytes"] // max(1, d["calls"]))


# requests a pattern may hold (about 70 bytes each); beyond, every rank is rebuilt from its average call
PATTERN_LIMIT = 1 << 21


def requests_of(d: dict | None) -> int:
    return (d["calls"] * (d.get("call_requests") or 1)) if d and exact_shape(d) else (d["calls"] if d else 0)


def rank_patterns(summaries: Sequence[dict | None]) -> list[RankPattern]:
    """Every rank's calls from its summary (None: no calls in this direction), rank by rank in order; all
    approximate (rank_calls) when the exact ones would hold more than PATTERN_LIMIT requests."""
    slot = max([average_call(d) for d in summaries if d] or [0])
    too_many = sum(requests_of(d) for d in summaries) > PATTERN_LIMIT
    out = []
    for r, d in enumerate(summaries):
        if d and too_many:
            d = dict(d, unflattened_calls=d["calls"])  # no exact shape: the average call
        calls, exact = rank_calls(d, r, len(summaries), slot) if d else ([], True)
        out.append(RankPattern(r, calls, exact))
    return out


def from_access(ranks: list[dict], direction: str) -> Pattern | None:
    """The pattern of one direction from a phase's `access` entries (report.Report.access); None if no rank
    made a collective call in that direction."""
    listed = sorted(ranks, key=lambda e: e["rank"])
    out = rank_patterns([e.get(direction) for e in listed])
    for r, e in zip(out, listed):
        r.rank = e["rank"]
    if not any(r.calls for r in out):
        return None
    return Pattern(direction, out)


def from_report(rep, phase: int, direction: str) -> Pattern | None:
    return from_access(rep.access(phase), direction)


def interleaved(calls: int, pieces: int, piece: int, ranks: int) -> list[dict]:
    """Every rank's summary of `calls` calls of `pieces` requests of `piece` bytes each: each row of the file
    one piece of every rank, in rank order (a decomposition by columns, as bandio's bands); one piece a call:
    a region per rank in each call, in rank order (one dataset per call)."""
    per_call = pieces * piece
    out = []
    for r in range(ranks):
        if pieces > 1:
            off, stride, step = r * piece, ranks * piece, ranks * per_call
        else:
            off, stride, step = r * per_call, 0, ranks * per_call
        out.append(
            {
                "calls": calls,
                "bytes": calls * per_call,
                "offset": off,
                "end": off + (calls - 1) * step + (pieces - 1) * stride + piece,
                "request_min": piece,
                "request_max": piece,
                "call_requests": pieces,
                "request_stride": stride,
                "call_step": step,
                "call_bytes": per_call,
                "unflattened_calls": 0,
            }
        )
    return out


# MPI-IO calls a file's HDF5 metadata may take (superblock, object headers, B-trees): with fewer than two
# calls a dataset call past these, each dataset call was one contiguous piece
METADATA_CALLS = 64


def hdf5_independent(phase: dict, direction: str) -> list[dict] | None:
    """A shared HDF5 file's independent transfers as the collective calls they would be, every rank's summary
    (as the access section has them): each dataset call (H5Dwrite, H5Dread) one call; the MPI-IO calls HDF5
    made for it (one per contiguous piece of the selection in the file) its pieces, of equal size, interleaved
    with the other ranks' (interleaved). None: not such a phase, or nothing moved in this direction."""
    h5, mpiio = phase.get("hdf5") or {}, phase.get("mpiio") or {}
    ranks, files = int(phase.get("ranks") or 1), int(phase.get("files") or 1)
    if phase.get("kind") != "hdf5" or phase.get("driver") != "mpio" or ranks < 2 or files != 1:
        return None
    word = "written" if direction == "write" else "read"
    ops = int(h5.get(f"dataset_{'writes' if direction == 'write' else 'reads'}") or 0)
    nbytes, mpi_calls = int(h5.get(f"bytes_{word}") or 0), int(mpiio.get(f"{direction}_calls") or 0)
    if ops < ranks or not nbytes or not mpi_calls:
        return None
    per_call = nbytes // ops
    pieces = 1 if mpi_calls < 2 * ops + METADATA_CALLS else mpi_calls // ops
    # the metadata's calls are counted too: the pieces are the most, within 10% below, that divide a call
    pieces = next((p for p in range(pieces, max(1, pieces * 9 // 10) - 1, -1) if per_call % p == 0), pieces)
    return interleaved(ops // ranks, pieces, max(1, per_call // pieces), ranks)


def from_hdf5_counters(phase: dict, direction: str) -> Pattern | None:
    """The pattern of hdf5_independent."""
    summaries = hdf5_independent(phase, direction)
    return Pattern(direction, rank_patterns(summaries)) if summaries else None
