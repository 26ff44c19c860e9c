"""The one owner of a study's state: every run a record, everything else derived.

A study lives in Optuna storage (SQLite by default, PostgreSQL for many
workers, in memory for benchmarks), as two Optuna studies: the study itself
holds the search trials (so Optuna's own tools see a conventional study), its
companion the other records, the budget, the workers' sessions and the leases.
Each measurement is a record of its own, written once by the worker that made
it and never rewritten. Pools, signatures, medians, the default's runs, the
trajectory and the tuning clock are derived from the records, and nowhere
else; the tuner, the strategies and the stop rules read them through this
class's views (read-only), never from Optuna's trials. Nothing shared is read,
modified and written: several workers can share one study.

`Store` puts together the parts of `study/`, one concern each:
- `storage` (where records live) and `sessions` (each worker's stretch of
  tuning time, the tuning clock);
- `records` and `derive` (what a record is; everything computed from them,
  incrementally, and the views: `as_of(n)`, `known_at(n)`);
- `leases` (exclusive sections one worker runs while the others wait: the
  confirmation round, a strategy's training) and `recovery` (a dead worker's
  trial, found by its heartbeat, failed and queued to run again, up to three
  starts in all).
Here: opening, the views, and writing records (`add_run`, `ask`, `tell`).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, cast

from optuna.trial import FrozenTrial, TrialState

from .study.derive import Derived, Point, Pool, Session, median_of, signature
from .study.leases import Beat, Lease, LeaseLost, Leases, Section, Sections
from .study.records import (
    BASELINE,
    CONFIRMATION,
    DEFAULT,
    RUN_KINDS,
    TRAINING,
    TRIAL,
    Record,
    Row,
    canonical,
    pack,
    record,
    unpack,
)
from .study.recovery import MAX_STARTS, Recovery, death_reason
from .study.sessions import Sessions
from .study.storage import BUDGET_KEY, COMPANION, StudyError, StudyStorage, db_error, open_storage, study_names
from .study.urls import mask
from .study_config import Budget, ConfigError, StudyConfig

__all__ = [
    "BASELINE",
    "CONFIRMATION",
    "DEFAULT",
    "RUN_KINDS",
    "TRAINING",
    "TRIAL",
    "Asked",
    "Lease",
    "LeaseLost",
    "MAX_STARTS",
    "Point",
    "Pool",
    "Record",
    "Section",
    "Session",
    "Store",
    "StudyError",
    "canonical",
    "db_error",
    "death_reason",
    "mask",
    "open_storage",
    "signature",
]


@dataclass
class Asked:
    """A search trial this worker owns until it is told."""

    trial_id: int
    number: int  # its place among the study's search trials: what the log and CSV call it
    params: dict[str, Any]  # {dimension: value label}
    distributions: dict
    settings: dict
    heartbeat: Beat
    retry_of: int | None = None

    @property
    def index(self) -> int:
        return self.number


class Store(Sessions, Recovery, Sections):
    """The study's state: read through the views below, written by the tuner (records, sessions, leases)."""

    def __init__(self, db: StudyStorage, config: StudyConfig, heartbeat_s: int | None = 10):
        self.db, self.config = db, config
        self.study, self.storage = db.study, db.storage
        self.heartbeat_s = heartbeat_s
        self.now: Callable[[], float] = time.time  # wall-clock time (tests give a deterministic one)
        self.session = Session(uuid.uuid4().hex[:12], socket.gethostname(), os.getpid(), self.now(), self.now())
        self.derived = Derived(config.objective.direction)
        self._attrs: dict[str, Any] = {}
        self._trajectory: tuple[Any, list[Point]] | None = None
        self._reports: dict[int, dict] = {}  # unpacked baseline reports, by record
        self.leases = Leases(db.backend, db.companion_id, lambda: self.session, self._read_attrs, heartbeat_s)
        self.refresh()

    # ---- opening ----

    @classmethod
    def create(
        cls, storage: str | Any, name: str, config: StudyConfig, budget: Budget, heartbeat_s: int | None = 10
    ) -> Store:
        config = config.stamped()
        db = StudyStorage.create(storage, name, config.objective.direction, config.to_json())
        store = cls(db, config, heartbeat_s)
        store.set_budget(budget)
        return store

    @classmethod
    def open(cls, storage: str | Any, name: str, heartbeat_s: int | None = 10) -> Store:
        db, doc = StudyStorage.open(storage, name)
        try:
            config = StudyConfig.from_json(doc)
        except ConfigError as e:
            raise StudyError(f"study '{name}': {e}") from None
        return cls(db, config, heartbeat_s)

    @property
    def name(self) -> str:
        return self.db.name

    # ---- reading: each record once ----

    def refresh(self, attrs: bool = True) -> None:
        """Reads what changed since the last refresh (records other workers added or finished, and unless
        attrs is False their sessions, the budget, the leases) and derives from it."""
        rows, study = self.db.read(set(self.derived.open), attrs)
        if rows:
            self.derived.add(record(r) for r in rows)
        if study is not None:
            self._attrs = study

    def _read_attrs(self) -> dict[str, Any]:
        self._attrs = self.db.attrs()
        return self._attrs

    def _apply(self, row: Row) -> Record:
        """A record this worker just wrote, derived without reading it back."""
        rec = record(row)
        self.derived.add([rec])
        return rec

    # ---- the budget: the one study-level value a user may change ----

    @property
    def budget(self) -> Budget:
        b = self._attrs.get(BUDGET_KEY) or {}
        return Budget(b.get("trials"), b.get("seconds"), b.get("runs"))

    def set_budget(self, budget: Budget) -> None:
        value = {"trials": budget.trials, "seconds": budget.seconds, "runs": budget.runs}
        self.db.backend.set_study_attr(self.db.companion_id, BUDGET_KEY, value)
        self._attrs[BUDGET_KEY] = value

    # ---- views of the derived state ----

    @property
    def pools(self) -> Mapping[str, Pool]:
        """Each effective configuration's runs, by signature (a read-only view)."""
        return MappingProxyType(self.derived.pools)

    @property
    def requested(self) -> Mapping[str, tuple[int, str]]:
        """Settings measured, as canonical text: (the record that measured them first, its signature)."""
        return MappingProxyType(self.derived.requested)

    @property
    def failed(self) -> Mapping[str, int]:
        """Settings whose run failed, as canonical text: the first such record."""
        return MappingProxyType(self.derived.failed)

    @property
    def default_runs(self) -> list[float]:
        return self.derived.default_runs

    @property
    def reference(self) -> dict[str, str] | None:
        return self.derived.reference

    @property
    def trajectory(self) -> list[Point]:
        """The study's state after each finished run (computed when asked for, kept until something changes)."""
        sessions = self.sessions()
        key = (self.derived.version, tuple(sessions))
        if self._trajectory is None or self._trajectory[0] != key:
            self._trajectory = (key, self.derived.trajectory(sessions, self.session.id))
        return self._trajectory[1]

    def records(self, *kinds: str) -> list[Record]:
        return self.derived.records(*kinds)

    def record(self, rid: int) -> Record | None:
        return self.derived.by_id.get(rid)

    def search_trials(self) -> list[Record]:
        return self.derived.search_trials()

    def count(self, kind: str) -> int:
        return self.derived.count(kind)

    def as_of(self, index: int, *kinds: str) -> list[Record]:
        """Records created before search trial `index` was asked for: what the study knew then."""
        return self.derived.as_of(index, *kinds)

    def known_at(self, index: int, *kinds: str) -> Derived:
        """The study as it stood when search trial `index` was asked for: its finished records of these kinds,
        derived on their own (pools, the default's runs, the best, what was measured), for strategies that
        decide from that moment (a generation's plan), so a resumed study or another worker decides the same."""
        known = Derived(self.config.objective.direction)
        known.add(r for r in self.as_of(index, *kinds) if r.end is not None)
        return known

    def confirmation_runs(self, plan: str) -> dict[str | None, list[float]]:
        """The successful runs of the confirmation round `plan`, by candidate (DEFAULT for the default)."""
        out: dict[str | None, list[float]] = {}
        for r in self.records(CONFIRMATION):
            if r.attrs.get("plan") == plan and r.ok:
                out.setdefault(r.attrs.get("candidate"), []).extend(r.runs)
        return out

    def completed(self) -> list[Record]:
        return [r for r in self.search_trials() if r.state == "COMPLETE"]

    def index_of(self, rid: int) -> int | None:
        """A search trial's place among the study's search trials, from its record id."""
        r = self.record(rid)
        return r.number if r is not None and r.kind == TRIAL else None

    def others(self) -> list[Store]:
        """The other iotuner studies in this study's storage, to read (strategies that learn from earlier
        studies of the same application). A study that cannot be read is left out."""
        names = study_names(self.db.storage, self.db.storage)
        out = []
        for name in sorted(names):
            if name == self.name or name.endswith(COMPANION) or name + COMPANION not in names:
                continue
            try:
                out.append(Store.open(self.db.storage, name, heartbeat_s=None))
            except StudyError:
                continue
        return out

    def application_runs(self) -> dict[str, int]:
        """Application runs the study made, by kind (confirmation apart: its size is fixed in advance), the
        run budget (`Budget.runs`) counting default, training and trials."""
        return {
            "default": sum(r.cost_runs for r in self.records(BASELINE)),
            "training": sum(r.cost_runs for r in self.records(TRAINING)),
            "trials": sum(r.cost_runs for r in self.search_trials() if r.finished),
            "confirmation": sum(r.cost_runs for r in self.records(CONFIRMATION)),
        }

    def runs_spent(self) -> int:
        """What the run budget counts: every application run before the confirmation round."""
        n = self.application_runs()
        return n["default"] + n["training"] + n["trials"]

    def baseline_report(self) -> dict | None:
        """The run report of the first run of the default that wrote one, whichever worker made it: what
        strategies that model the application (hybrid, auto) start from. None: no such run yet."""
        for r in self.records(BASELINE):
            if "report" in r.attrs:
                if r.id not in self._reports:
                    self._reports[r.id] = unpack(r.attrs["report"])
                return self._reports[r.id]
        return None

    def trials_run(self) -> int:
        """Search trials that cost a run: the trial budget counts these."""
        return self.derived.trials_run

    def signature(self, effective: Mapping[str, list[str]]) -> str:
        return signature(effective, self.reference or {}, self.config.nodes)

    def default_signatures(self) -> set[str]:
        return self.derived.default_signatures

    def default_value(self) -> float | None:
        return self.derived.default_value()

    def value_of(self, sig: str) -> float | None:
        return self.derived.value_of(sig)

    def current_values(self) -> dict[int, float]:
        """Every completed search trial's value as it stands now (its configuration's median), by number."""
        out = {}
        for r in self.completed():
            v = self.value_of(r.signature) if r.signature is not None else None
            if v is not None:
                out[r.number] = v
        return out

    def ranked_pools(self, key: Callable[[float], float] | None = None) -> list[Pool]:
        """Configurations other than the default, best first by their current median (key: higher is better;
        by default the objective's direction)."""
        ranked = self.derived.ranked()
        return ranked if key is None else sorted(ranked, key=lambda p: key(median_of(p)), reverse=True)

    def best_pool(self) -> Pool | None:
        return self.derived.best()

    def run_estimate(self) -> float:
        return self.derived.run_estimate()

    def owed(self) -> list[Record]:
        return self.derived.owed()

    def others_running(self) -> list[Record]:
        """Search trials other workers are running now."""
        return [r for r in self.derived.running() if r.session != self.session.id]

    def in_flight(self, settings: Mapping[str, Any], before: int) -> Record | None:
        """A running search trial of another worker, asked before trial `before`, that measures these
        settings, or that has not said yet what it measures: the earlier trial measures a point, a later one
        with the same point waits for it. (A worker asks, then publishes its point: between the two, a peer
        that asked later and published first would otherwise not see it.)"""
        key = canonical(settings)
        for r in self.derived.running():
            if r.number < before and r.session != self.session.id and ("settings" not in r.attrs or r.key == key):
                return r
        return None

    # ---- writing records ----

    def owner(self) -> dict:
        """Who works on a running record: this worker's host, process, session (and Slurm job)."""
        out = {"host": self.session.host, "pid": self.session.pid, "session": self.session.id}
        env = os.environ
        if env.get("SLURM_JOB_ID"):
            # scancel takes an array task as ARRAY_TASK (the array's own id would cancel every task);
            # the job-completion log knows each task by its own id
            array, task = env.get("SLURM_ARRAY_JOB_ID"), env.get("SLURM_ARRAY_TASK_ID")
            out["slurm_job"] = f"{array}_{task}" if array and task else env["SLURM_JOB_ID"]
            out["slurm_job_id"] = env["SLURM_JOB_ID"]
        return out

    def add_run(
        self,
        kind: str,
        *,
        settings: Mapping[str, Any],
        value: float | None,
        error: str | None = None,
        signature: str | None = None,
        duration_s: float = 0.0,
        attrs: Mapping[str, Any] | None = None,
        report: Mapping[str, Any] | None = None,
    ) -> Record:
        """One finished run of the default, a training point or the confirmation round, recorded at once.
        report: its run report, kept when it is the first of the default's (`baseline_report`)."""
        assert kind in (BASELINE, TRAINING, CONFIRMATION)
        a = {
            "kind": kind,
            "settings": dict(settings),
            "runs": [value] if value is not None else [],
            "signature": signature,
            "cost_runs": 1,
            "end": self.now(),
            "duration_s": duration_s,
            "session": self.session.id,
            **(attrs or {}),
        }
        if report is not None and kind == BASELINE and self.baseline_report() is None:
            a["report"] = pack(report)
        if error is not None:
            a["error"] = error
        state = "COMPLETE" if value is not None else "FAIL"
        sid = self.db.companion_id
        tid, number = self.db.backend.create(sid, state, a, value=value, touch=self._touched())
        return self._apply(Row(tid, number, state, a, False, sid))

    def ask(
        self,
        choose: Callable[[FrozenTrial, int], dict[str, tuple[Any, Any]]],
        describe: Callable[[dict[str, Any]], tuple[dict, str | None]],
    ) -> Asked:
        """A search trial, owned by this worker (heartbeat) until it is told: one queued to run again if there
        is one, else a new one whose point `choose(trial, trial_id)` picks ({dimension: (value, distribution)}; a
        sampler may need the trial's number), published with its settings and why (`describe(params)`)."""
        backend, sid = self.db.backend, self.db.study_id
        for owed in self.owed():
            owner = self.owner()
            if backend.claim(owed.id, {"owner": owner}):
                self._apply(Row(owed.id, owed.number, "RUNNING", {**owed.attrs, "owner": owner}, True, sid))
                params = backend.params(owed.id)
                return self._asked(owed.id, owed.number, params, owed.settings, owed.attrs.get("retry_of"))
        tid, number = backend.create(sid, "RUNNING", {"owner": self.owner()}, heartbeat=True)
        trial = FrozenTrial(
            number=number,
            state=TrialState.RUNNING,
            value=None,
            values=None,
            datetime_start=None,
            datetime_complete=None,
            params={},
            distributions={},
            user_attrs={},
            system_attrs={},
            intermediate_values={},
            trial_id=tid,
        )
        try:
            params = choose(trial, tid)
            settings, why = describe({k: v for k, (v, _) in params.items()})
            backend.publish(tid, params, {"settings": settings, **({"why": why} if why else {})})
        except BaseException:
            backend.finish(tid, "FAIL", {"result": {"error": "the tuner stopped before it ran", "end": self.now()}})
            raise
        asked = self._asked(tid, number, params, settings)
        self.refresh(attrs=False)  # the trials asked just before this one, which it must not measure twice
        return asked

    def _asked(self, tid: int, number: int, params: dict, settings: dict, retry_of: int | None = None) -> Asked:
        backend = self.db.backend
        beat = Beat(lambda: backend.beat(tid) or True, self.heartbeat_s if backend.has_heartbeats else None)
        return Asked(
            tid,
            number,
            {k: v for k, (v, _) in params.items()},
            {k: d for k, (_, d) in params.items()},
            dict(settings),
            beat,
            retry_of,
        )

    def tell(
        self,
        asked: Asked,
        *,
        settings: Mapping[str, Any],
        runs: list[float],
        signature: str | None,
        error: str | None,
        cost_runs: int,
        duration_s: float,
        duplicate_of: int | str | None = None,
        value: float | None = None,
        retry: bool = False,
    ) -> Record:
        """Finishes a search trial: its runs, what took effect, or why it failed (one attribute, one write).
        retry: a failure that was not the settings' doing (the scheduler ended the job): run once more."""
        result = {
            "settings": dict(settings),
            "runs": runs,
            "signature": signature,
            "cost_runs": cost_runs,
            "duration_s": duration_s,
            "end": self.now(),
        }
        if duplicate_of is not None:
            result["duplicate_of"] = duplicate_of
        if error is not None:
            result["error"] = error
        if retry:
            result["retryable"] = True
        state = "COMPLETE" if error is None and value is not None else "FAIL"
        try:
            told = self.db.backend.finish(
                asked.trial_id, state, {"result": result}, value if state == "COMPLETE" else None, touch=self._touched()
            )
        finally:
            asked.heartbeat.stop()
        if not told:  # another worker took this worker for dead and failed the trial: its retry runs it
            self.refresh()
            return cast(Record, self.record(asked.trial_id))  # in the study: this worker asked for it
        old = self.record(asked.trial_id)
        attrs = {**(old.attrs if old else {}), "settings": dict(settings), "result": result}
        rec = self._apply(Row(asked.trial_id, asked.number, state, attrs, True, self.db.study_id))
        if retry and error is not None:
            self.requeue(rec, error)
        return rec

    def abandon(self, asked: Asked, why: str) -> None:
        """A trial this worker cannot finish (its own I/O failed): failed and not run again, with the reason."""
        try:
            self.db.backend.finish(asked.trial_id, "FAIL", {"result": {"error": why, "end": self.now()}})
        finally:
            asked.heartbeat.stop()
        self.refresh()
