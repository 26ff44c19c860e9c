"""The one owner of a study's state: every run a record, everything else derived.

A study lives in Optuna storage (SQLite by default, PostgreSQL for many
workers, in memory for benchmarks), as two Optuna studies: the study itself
holds the search trials (so Optuna's own tools see a conventional study), its
companion the other records, the budget, the workers' sessions and the leases.
Each measurement is a record of its own, written once by the worker that made
it and never rewritten. Pools, signatures, medians, the default's runs, the
trajectory and the tuning clock are derived from the records, and nowhere
else; the tuner, the strategies and the stop rules read them through the
store's views (read-only), never from Optuna's trials. Nothing shared is read,
modified and written: several workers can share one study.

As Optuna keeps its storage, its trials' read-only views and its heartbeats
apart, `Store` is the study (its config, its budget, the other studies beside
it), its one writer (`add_run`, `ask`, `tell`, `abandon`) and its refresh, and
its readers use the view they need:
- `trials` (`study.views.Trials`): what was run, the search trials, what the
  study knew at a trial (`as_of(n)`, `known_at(n)`), the counts the budgets count;
- `results` (`study.views.Results`): each effective configuration's runs and
  value, the default's, the ranking, the trajectory;
- `workers` (`study.coordination.Workers`): this worker's session and the
  others' (the tuning clock), the exclusive sections they take turns at
  (leases: the confirmation round, a strategy's training), and the trials of a
  worker that died (recovery: failed and queued to run again, up to three
  starts in all).
Below them, `study/` holds one concern a module: `storage` (where records
live), `records` and `derive` (what a record is; everything computed from them).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, cast

from optuna.trial import FrozenTrial, TrialState

from .study.coordination import Workers
from .study.derive import Derived, Point, Pool, Session, signature
from .study.leases import Beat, Lease, LeaseLost, Section
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
)
from .study.recovery import MAX_STARTS, death_reason
from .study.storage import BUDGET_KEY, COMPANION, StudyError, StudyStorage, db_error, open_storage, study_names
from .study.urls import mask
from .study.views import Results, Trials
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
    "Results",
    "Section",
    "Session",
    "Store",
    "StudyError",
    "Trials",
    "Workers",
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


class Store:
    """The study: written by the tuner (records), read through its views (trials, results, workers)."""

    def __init__(self, db: StudyStorage, config: StudyConfig, heartbeat_s: int | None = 10):
        self.db, self.config = db, config
        self.study, self.storage = db.study, db.storage
        self.now: Callable[[], float] = time.time  # wall-clock time (tests give a deterministic one)
        self.derived = Derived(config.objective.direction)
        self.attrs: dict[str, Any] = {}  # the companion's attributes (budget, sessions, leases) as last read
        self.workers = Workers(self, heartbeat_s)
        self.trials = Trials(self.derived, config.objective.direction)
        self.results = Results(self.derived, self.trials, self.workers, config.nodes)
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

    # ---- reading: each record once ----

    def refresh(self, attrs: bool = True) -> None:
        """Reads what changed since the last refresh (records other workers added or finished, and unless
        attrs is False their sessions, the budget, the leases) and derives from it."""
        rows, study = self.db.read(set(self.derived.open), attrs)
        if rows:
            self.derived.add(record(r) for r in rows)
        if study is not None:
            self._replace_attrs(study)

    def read_attrs(self) -> dict[str, Any]:
        """The companion's attributes, read now (the leases' compare-and-swap needs the latest)."""
        self._replace_attrs(self.db.attrs())
        return self.attrs

    def _replace_attrs(self, new: Mapping[str, Any]) -> None:
        self.attrs.clear()  # in place: the workers' view reads the same dict
        self.attrs.update(new)

    def written(self, row: Row) -> Record:
        """A record this worker just wrote, derived without reading it back."""
        rec = record(row)
        self.derived.add([rec])
        return rec

    # ---- the budget: the one study-level value a user may change ----

    @property
    def budget(self) -> Budget:
        b = self.attrs.get(BUDGET_KEY) or {}
        return Budget(b.get("trials"), b.get("seconds"), b.get("runs"))

    def set_budget(self, budget: Budget) -> None:
        value = {"trials": budget.trials, "seconds": budget.seconds, "runs": budget.runs}
        self.db.backend.set_study_attr(self.db.companion_id, BUDGET_KEY, value)
        self.attrs[BUDGET_KEY] = value

    # ---- writing records ----

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
            "session": self.workers.session.id,
            **(attrs or {}),
        }
        if report is not None and kind == BASELINE and self.trials.baseline_report() is None:
            a["report"] = pack(report)
        if error is not None:
            a["error"] = error
        state = "COMPLETE" if value is not None else "FAIL"
        sid = self.db.companion_id
        tid, number = self.db.backend.create(sid, state, a, value=value, touch=self.workers.touched())
        return self.written(Row(tid, number, state, a, False, sid))

    def ask(
        self,
        choose: Callable[[FrozenTrial, int], dict[str, tuple[Any, Any]]],
        describe: Callable[[dict[str, Any]], tuple[dict, str | None]],
    ) -> Asked:
        """A search trial, owned by this worker (heartbeat) until it is told: one queued to run again if there
        is one, else a new one whose point `choose(trial, trial_id)` picks ({dimension: (value, distribution)}; a
        sampler may need the trial's number), published with its settings and why (`describe(params)`)."""
        backend, sid = self.db.backend, self.db.study_id
        for owed in self.trials.owed():
            owner = self.workers.owner()
            if backend.claim(owed.id, {"owner": owner}):
                self.written(Row(owed.id, owed.number, "RUNNING", {**owed.attrs, "owner": owner}, True, sid))
                params = backend.params(owed.id)
                return self._asked(owed.id, owed.number, params, owed.settings, owed.attrs.get("retry_of"))
        tid, number = backend.create(sid, "RUNNING", {"owner": self.workers.owner()}, heartbeat=True)
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
        beat = Beat(lambda: backend.beat(tid) or True, self.workers.heartbeat_s if backend.has_heartbeats else None)
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
                asked.trial_id,
                state,
                {"result": result},
                value if state == "COMPLETE" else None,
                touch=self.workers.touched(),
            )
        finally:
            asked.heartbeat.stop()
        if not told:  # another worker took this worker for dead and failed the trial: its retry runs it
            self.refresh()
            return cast(Record, self.trials.record(asked.trial_id))  # in the study: this worker asked for it
        old = self.trials.record(asked.trial_id)
        attrs = {**(old.attrs if old else {}), "settings": dict(settings), "result": result}
        rec = self.written(Row(asked.trial_id, asked.number, state, attrs, True, self.db.study_id))
        if retry and error is not None:
            self.workers.requeue(rec, error)
        return rec

    def abandon(self, asked: Asked, why: str) -> None:
        """A trial this worker cannot finish (its own I/O failed): failed and not run again, with the reason."""
        try:
            self.db.backend.finish(asked.trial_id, "FAIL", {"result": {"error": why, "end": self.now()}})
        finally:
            asked.heartbeat.stop()
        self.refresh()
