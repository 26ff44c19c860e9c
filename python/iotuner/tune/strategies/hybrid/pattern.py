"""A phase's collective access pattern, rebuilt from the run report's `access` section.

Each rank's summary (docs/report.md, Access patterns) describes its calls exactly when they are regular:
every call has the same number of equal requests at one stride, and successive calls start one step apart.
That is the shape of block, strided and IOR-like patterns; anything else is rebuilt approximately (each rank's
average call, one request, in a slot of its own in each call's region, in rank order) and marked inexact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
        return [[(first + k * step + j * stride, size) for j in range(nreq)] for k in range(calls)], True
    per_call = average_call(d)
    slot = max(slot, per_call)
    return [[(k * nprocs * slot + rank * slot, per_call)] for k in range(calls)], False


def exact_shape(d: dict) -> bool:
    """Every call the same number of equal requests at one stride, calls one step apart, offsets known."""
    return (d.get("unflattened_calls", 0) == 0 and d.get("call_requests") is not None
            and d.get("request_min") is not None and d["request_min"] == d.get("request_max")
            and d.get("request_stride") is not None and d.get("call_step") is not None
            and d.get("offset") is not None)


def average_call(d: dict) -> int:
    return max(1, d["bytes"] // max(1, d["calls"]))


# requests a pattern may hold (about 70 bytes each); beyond, every rank is rebuilt from its average call
PATTERN_LIMIT = 1 << 21


def requests_of(d: dict | None) -> int:
    return (d["calls"] * (d.get("call_requests") or 1)) if d and exact_shape(d) else (d["calls"] if d else 0)


def rank_patterns(summaries: list[dict | None]) -> list[RankPattern]:
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
