"""Everything a study knows beyond its records, derived from them, here and nowhere else.

Records are read once each (`Derived.add`), finished ones are folded into the
aggregates as they arrive, whatever their order: the pools of runs per effective
configuration (each with the record that measured it first, by the time it
finished), the default's runs, the points measured or failed, the trials the
budget counts, the best configuration. So the cost of a new record does not grow
with the study. The trajectory (the study's state after each run, in the order
runs finished) and the tuning clock are computed when asked for, from the
records and the workers' sessions.
"""

from __future__ import annotations

import bisect
import heapq
import json
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Callable, cast

from ...settings import constraints
from .records import BASELINE, DEFAULT, RUN_KINDS, TRAINING, TRIAL, Record


@dataclass
class Pool:
    """All runs of one effective configuration: trials (and training runs) that share it share its result."""

    signature: str
    runs: list[float] = field(default_factory=list)
    first: int | None = None  # the record that measured it first (its id)
    settings: dict = field(default_factory=dict)
    median: float | None = None  # of its runs, kept up to date by add
    first_end: float = float("inf")

    def add(self, runs) -> None:
        self.runs.extend(runs)
        self.median = statistics.median(self.runs) if self.runs else None


def median_of(pool: Pool) -> float:
    """The median of a pool that has runs (every pool compared or ranked has)."""
    return cast(float, pool.median)


@dataclass(frozen=True)
class Point:
    """The study's state just after a run finished: the trajectory RoTI and the curve are made of."""

    at_s: float  # tuning time
    kind: str  # the record's kind
    record: int  # the record's id
    ok: bool
    value: float | None  # that record's configuration, as it stood then (its pool's median)
    best: float | None  # the best configuration's median then (default excluded)
    best_runs: int
    default: float | None  # the default's median then
    default_runs: int


@dataclass(frozen=True)
class Session:
    id: str
    host: str
    pid: int
    start: float
    last: float
    scratch: str | None = None


# ---- effective settings and their signature ----


def _normalize(eff: Mapping[str, list[str]], nodes: int) -> dict[str, list[str]]:
    """Constraint targets in their canonical form (`Constraint.canonical`)."""
    out = dict(eff)
    for key, c in constraints().items():
        if c.target in out and len(out.get(key, ())) == 1 and out[key][0].isdigit():
            out[c.target] = sorted({c.canonical(v, int(out[key][0]), nodes) for v in out[c.target]})
    return out


def signature(effective: Mapping[str, list[str]], reference: Mapping[str, str], nodes: int = 1) -> str:
    """What took effect that differs from the default's effective values, as canonical JSON.

    Equal signatures are one experiment and share one result: knobs dropped,
    not applicable, or in effect with the default's own value change nothing,
    and cb_config_list "*:4" is "*:2" when cb_nodes is 2 on one node.
    """
    eff = _normalize(effective, nodes)
    ref = {k: v[0] for k, v in _normalize({k: [v] for k, v in reference.items()}, nodes).items()}
    return json.dumps({k: v for k, v in sorted(eff.items()) if v != [ref.get(k)]})


# ---- the tuning clock ----


def clock_at(times: Iterable[float], sessions: Iterable[Session], own: str | None) -> list[float]:
    """Tuning time at each wall-clock time: how long at least one worker was working on the study up to it.
    A session spans its start to its last sign of life; this worker's own (id `own`) spans up to the time
    asked about. The union of the spans is made once, then each time is a lookup."""
    spans = sorted((s.start, float("inf") if s.id == own else s.last) for s in sessions)
    # disjoint intervals, and the length of those before each
    starts: list[float] = []
    ends: list[float] = []
    before = [0.0]
    for a, b in spans:
        if ends and a <= ends[-1]:
            ends[-1] = max(ends[-1], b)
        elif b > a:
            starts.append(a)
            ends.append(b)
    for a, b in zip(starts, ends):
        before.append(before[-1] + (b - a))
    out = []
    for t in times:
        i = bisect.bisect_right(starts, t)
        out.append(before[i - 1] + min(t, ends[i - 1]) - starts[i - 1] if i else 0.0)
    return out


class Derived:
    """The records read so far, and what they say. `add` takes records new or changed since the last call."""

    def __init__(self, direction: str):
        self.key: Callable[[float], float] = (lambda v: v) if direction == "maximize" else (lambda v: -v)
        self.by_id: dict[int, Record] = {}
        self._kinds: dict[str, list[Record]] = {k: [] for k in RUN_KINDS}  # each by id
        self.open: dict[int, Record] = {}  # search trials running or waiting to run again
        self.pools: dict[str, Pool] = {}
        self.default_runs: list[float] = []
        self.requested: dict[str, tuple[int, str]] = {}  # canonical settings -> (first record, signature)
        self._requested_end: dict[str, float] = {}
        self.failed: dict[str, int] = {}  # canonical settings that failed -> the first such record
        self._failed_end: dict[str, float] = {}
        self.reference: dict[str, str] | None = None  # the default's effective settings
        self._reference_id: int | None = None
        self.default_signatures: set[str] = set()
        self.trials_run = 0
        self._durations: list[float] = []  # per run, sorted
        self._best: Pool | None = None
        self.version = 0  # changes with every finished record (the trajectory's cache)
        self.last_end: float | None = None  # when the last run finished

    # ---- reading records ----

    def add(self, records: Iterable[Record]) -> None:
        for r in records:
            old = self.by_id.get(r.id)
            if old is not None and old.finished:
                continue  # a finished record never changes
            self.by_id[r.id] = r
            lst = self._kinds.setdefault(r.kind, [])
            i = bisect.bisect_left(lst, r.id, key=lambda x: x.id)
            if i < len(lst) and lst[i].id == r.id:
                lst[i] = r
            else:
                lst.insert(i, r)
            if r.finished:
                self.open.pop(r.id, None)
                self._apply(r)
            else:
                self.open[r.id] = r

    def _apply(self, r: Record) -> None:
        self.version += 1
        if r.end is None or r.kind not in RUN_KINDS:
            return
        if self.last_end is None or r.end > self.last_end:
            self.last_end = r.end
        if r.ok and r.cost_runs and r.duration_s > 0:
            bisect.insort(self._durations, r.duration_s / max(1, r.cost_runs))
        if r.kind == TRIAL and r.counts:
            self.trials_run += 1
        if r.kind == BASELINE and r.ok:
            self.default_runs.extend(r.runs)
            if r.signature is not None:
                self.default_signatures.add(r.signature)
            if isinstance(r.attrs.get("reference"), dict) and (self._reference_id is None or r.id < self._reference_id):
                self.reference, self._reference_id = r.attrs["reference"], r.id
        if r.kind not in (TRIAL, TRAINING):
            return
        order = (r.end, r.id)
        if r.state == "FAIL" and r.cost_runs and not r.interrupted and not r.attrs.get("retryable"):
            if r.key not in self.failed or order < (self._failed_end[r.key], self.failed[r.key]):
                self.failed[r.key], self._failed_end[r.key] = r.id, r.end
        if r.state != "COMPLETE" or r.signature is None:
            return
        if r.key not in self.requested or order < (self._requested_end[r.key], self.requested[r.key][0]):
            self.requested[r.key], self._requested_end[r.key] = (r.id, r.signature), r.end
        if r.duplicate_of == DEFAULT:
            self.default_runs.extend(r.runs)
            return
        pool = self.pools.get(r.signature)
        if pool is None:
            pool = self.pools[r.signature] = Pool(r.signature)
        if order < (pool.first_end, pool.first if pool.first is not None else 0):
            pool.first, pool.first_end, pool.settings = r.id, r.end, r.settings
        was = pool.median
        pool.add(r.runs)
        self._rank(pool, was)

    def _rank(self, pool: Pool, was: float | None) -> None:
        """Keeps the best pool (default excluded) without sorting every pool at every record."""
        if pool.signature in self.default_signatures or pool.median is None:
            return
        best = self._best
        if best is None:
            if len(self.pools) == 1:
                self._best = pool
            return  # unknown until asked for (best() looks again, once)
        if best is pool:
            if was is not None and self.key(median_of(pool)) < self.key(was):
                self._best = None  # the best got worse: look again when asked
        elif self.key(median_of(pool)) > self.key(median_of(best)):
            self._best = pool

    # ---- views ----

    def records(self, *kinds: str) -> list[Record]:
        """Records of these kinds (all without kinds), in the order they were created."""
        kinds = kinds or tuple(self._kinds)
        if len(kinds) == 1:
            return list(self._kinds.get(kinds[0], ()))
        return list(heapq.merge(*(self._kinds.get(k, ()) for k in kinds), key=lambda r: r.id))

    def search_trials(self) -> list[Record]:
        return list(self._kinds[TRIAL])

    def count(self, kind: str) -> int:
        return len(self._kinds.get(kind, ()))

    def as_of(self, index: int, *kinds: str) -> list[Record]:
        """Records (of these kinds) created before search trial `index` was asked for: what the study knew
        then. All of them when there is no such trial yet."""
        trials = self._kinds[TRIAL]
        limit = trials[index].id if index < len(trials) else float("inf")
        return [r for r in self.records(*kinds) if r.id < limit]

    def best(self) -> Pool | None:
        """The best configuration measured so far by its current median (the default's excluded)."""
        if self._best is None or self._best.signature in self.default_signatures:
            ranked = self.ranked()
            self._best = ranked[0] if ranked else None
        return self._best

    def ranked(self) -> list[Pool]:
        """Configurations other than the default, best first by their current median."""
        pools = [p for p in self.pools.values() if p.runs and p.signature not in self.default_signatures]
        return sorted(pools, key=lambda p: self.key(median_of(p)), reverse=True)

    def default_value(self) -> float | None:
        return statistics.median(self.default_runs) if self.default_runs else None

    def value_of(self, sig: str) -> float | None:
        """The current result of an effective configuration: the median of all its runs."""
        if sig in self.default_signatures:
            return self.default_value()
        pool = self.pools.get(sig)
        return pool.median if pool else None

    def run_estimate(self) -> float:
        """How long one run takes: the median over the study's successful runs (1 s before any)."""
        d = self._durations
        if not d:
            return 1.0
        mid = len(d) // 2
        return d[mid] if len(d) % 2 else (d[mid - 1] + d[mid]) / 2

    def owed(self) -> list[Record]:
        """Search trials queued to run again (their worker died, or the scheduler ended their job)."""
        return sorted((r for r in self.open.values() if r.state == "WAITING"), key=lambda r: r.id)

    def running(self) -> list[Record]:
        return sorted((r for r in self.open.values() if r.state == "RUNNING"), key=lambda r: r.id)

    # ---- the trajectory ----

    def trajectory(self, sessions: list[Session], own: str | None) -> list[Point]:
        """The study's state after each finished run, in the order runs finished: each record's
        configuration, the best and the default as they stood then, on the tuning clock."""
        finished = sorted(
            (r for kind in RUN_KINDS for r in self._kinds[kind] if r.end is not None and r.finished),
            key=lambda r: (r.end, r.id),
        )
        times = clock_at([cast(float, r.end) for r in finished], sessions, own)
        default_runs: list[float] = []
        pools: dict[str, Pool] = {}
        best: Pool | None = None
        key = self.key
        out = []
        for r, at in zip(finished, times):
            pool = None
            if r.kind == BASELINE and r.ok:
                default_runs.extend(r.runs)
            elif r.kind in (TRIAL, TRAINING) and r.state == "COMPLETE" and r.signature is not None:
                if r.duplicate_of == DEFAULT:
                    default_runs.extend(r.runs)
                else:
                    pool = pools.setdefault(r.signature, Pool(r.signature))
                    pool.add(r.runs)
                    if best is None or pool is best or key(median_of(pool)) > key(median_of(best)):
                        best = max(pools.values(), key=lambda p: key(median_of(p))) if pool is best else pool
            default = statistics.median(default_runs) if default_runs else None
            if pool is not None:
                value = pool.median
            elif r.ok and (r.kind == BASELINE or r.duplicate_of == DEFAULT):
                value = default
            else:
                value = r.runs[0] if r.ok else None
            out.append(
                Point(
                    at_s=at,
                    kind=r.kind,
                    record=r.id,
                    ok=r.ok,
                    value=value,
                    best=best.median if best else None,
                    best_runs=len(best.runs) if best else 0,
                    default=default,
                    default_runs=len(default_runs),
                )
            )
        return out
