"""One record of a study, as stored: every run is one, written once by the worker that made it.

- `trial`: a point of the search (Optuna's own trials: `study.best_trial` is one of them), with its runs;
- `baseline`: one run of the default settings;
- `training`: one run a strategy made for itself before searching;
- `confirmation`: one run of the confirmation round (a candidate or the default).

A record's `id` is the storage's trial id: unique across the study and its companion, and in the
order records were created. A search trial's `number` is its place among the search trials.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TRIAL, BASELINE, TRAINING, CONFIRMATION = "trial", "baseline", "training", "confirmation"
RUN_KINDS = (BASELINE, TRIAL, TRAINING, CONFIRMATION)
DEFAULT = "default"  # the pool of the default settings (and duplicate_of of a trial that took effect as it)
FINISHED = ("COMPLETE", "FAIL", "PRUNED")


def canonical(flat: Mapping[str, Any]) -> str:
    return json.dumps(flat, sort_keys=True)


@dataclass(frozen=True)
class Row:
    """A stored trial as the storage gives it: enough to make a record."""

    id: int  # the storage's trial id
    number: int  # Optuna's number in its study
    state: str  # COMPLETE, FAIL, RUNNING, WAITING, PRUNED
    attrs: Mapping[str, Any]  # its user attributes
    search: bool  # a trial of the study itself (else of its companion)
    study: int = 0  # the Optuna study's id


@dataclass(frozen=True)
class Record:
    """One record of the study."""

    id: int
    number: int  # a search trial's place among the search trials; a companion record's own number
    kind: str
    state: str
    settings: dict  # the point's flat settings ({} for the default)
    runs: tuple[float, ...]  # measured values: a trial's repeats, one value for the other kinds
    signature: str | None  # what took effect that differs from the default (None: not measured)
    error: str | None
    duplicate_of: int | str | None  # a record that shared a result: the first one's id, or DEFAULT
    cost_runs: int
    end: float | None  # wall-clock time it finished (epoch seconds)
    duration_s: float
    session: str | None
    attrs: Mapping[str, Any]  # kind-specific: a confirmation's plan and round, a retry's original
    key: str = ""  # the settings as canonical text

    @property
    def ok(self) -> bool:
        return self.state == "COMPLETE" and bool(self.runs)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def interrupted(self) -> bool:
        """A search trial failed by another worker because its own stopped before telling it."""
        return self.kind == TRIAL and self.state == "FAIL" and "result" not in self.attrs

    @property
    def counts(self) -> bool:
        """A search trial that cost runs: the trial budget counts these. A re-proposed point costs none, and
        a trial interrupted (its worker died) or ended by the scheduler is run again instead."""
        return (
            self.kind == TRIAL
            and self.state in ("COMPLETE", "FAIL")
            and self.cost_runs > 0
            and not self.interrupted
            and not self.attrs.get("retryable")
        )


def record(row: Row) -> Record:
    a = {**row.attrs, **(row.attrs.get("result") or {})}  # a search trial's outcome is told in one attribute
    kind = TRIAL if row.search else a.get("kind", BASELINE)
    interrupted = row.search and row.state == "FAIL" and "result" not in row.attrs
    settings = a.get("settings") or {}
    return Record(
        id=row.id,
        number=row.number,
        kind=kind,
        state=row.state,
        settings=settings,
        runs=tuple(a.get("runs", ())),
        signature=a.get("signature"),
        error="interrupted: its worker stopped before finishing it" if interrupted else a.get("error"),
        duplicate_of=a.get("duplicate_of"),
        cost_runs=int(a.get("cost_runs", 0)),
        end=a.get("end"),
        duration_s=float(a.get("duration_s", 0.0)),
        session=a.get("session") or (a.get("owner") or {}).get("session"),
        attrs=a,
        key=canonical(settings),
    )


def clean(attrs: Mapping[str, Any]) -> dict:
    """JSON-safe attributes (numbers as numbers, the rest as text)."""
    return json.loads(json.dumps(dict(attrs), default=str))


def pack(doc: Mapping[str, Any]) -> str:
    """A document kept in a record's attributes, compressed (a baseline's run report: its access pattern
    repeats itself rank after rank)."""
    return base64.b64encode(zlib.compress(json.dumps(doc, separators=(",", ":")).encode(), 6)).decode()


def unpack(text: str) -> dict:
    return json.loads(zlib.decompress(base64.b64decode(text)))
