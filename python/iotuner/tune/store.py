"""The one owner of a study's state: every run a record, everything else derived.

A study lives in Optuna storage (SQLite by default, PostgreSQL for many
workers, in memory for benchmarks). Each measurement is a record of its own,
written once by the worker that made it and never rewritten:

- `trial`: a point the strategy proposed (Optuna ask/tell), with its runs;
- `baseline`: one run of the default settings;
- `training`: one run a strategy made for itself before searching;
- `confirmation`: one run of the confirmation round (a candidate or the default);
- `lock`: an exclusive section (the confirmation round, a strategy's training)
  held by one worker (RUNNING), completed (PRUNED: finished without a
  measurement) or given up (FAIL); the others wait for it.

Pools (the runs of one effective configuration), signatures, medians, the
default's runs, the trajectory and the tuning clock are derived from the
records, here and nowhere else. Nothing shared is read, modified and written:
several workers can share one study. A worker that dies leaves its running
trial with a heartbeat that goes stale; it is then failed and run again once
(Optuna's heartbeat, as `BaseStorage` prescribes: a running trial belongs to
the worker that asked for it). A trial of a process that is gone from this
host is recovered at once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sqlite3
import statistics
import threading
import time
import uuid
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import optuna
import sqlalchemy
from optuna.trial import FrozenTrial, TrialState

from .config import Budget, ConfigError, StudyConfig
from .space import constraints

CONFIG_KEY = "iotuner"
BUDGET_KEY = "iotuner-budget"
SESSION_PREFIX = "session:"
DEFAULT = "default"  # the pool of the default settings (and duplicate_of of a trial that took effect as it)

TRIAL, BASELINE, TRAINING, CONFIRMATION, LOCK = "trial", "baseline", "training", "confirmation", "lock"
RUN_KINDS = (BASELINE, TRIAL, TRAINING, CONFIRMATION)
DONE = "PRUNED"  # a lock record whose section was completed (a finished record without a measurement)

optuna.logging.set_verbosity(optuna.logging.WARNING)
logging.getLogger("alembic").setLevel(logging.WARNING)
warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
# ask/tell with heartbeats is what BaseStorage's contract allows; Optuna only expects it from Study.optimize
warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize")


class StudyError(RuntimeError):
    pass


def canonical(flat: Mapping[str, Any]) -> str:
    return json.dumps(flat, sort_keys=True)


# ---- records ----

@dataclass(frozen=True)
class Record:
    """One record of the study, as stored."""
    number: int  # Optuna's trial number (records of every kind share the numbering)
    trial_id: int
    kind: str
    state: str  # COMPLETE, FAIL, RUNNING, WAITING
    settings: dict  # the point's flat settings ({} for the default)
    runs: tuple[float, ...]  # measured values: a trial's repeats, one value for the other kinds
    signature: str | None  # what took effect that differs from the default (None: not measured)
    error: str | None
    duplicate_of: int | str | None  # a trial that shared a result: the first trial, or DEFAULT
    cost_runs: int
    end: float | None  # wall-clock time it finished (epoch seconds)
    duration_s: float
    session: str | None
    attrs: Mapping[str, Any]  # kind-specific: a lock's name and key, a confirmation's plan and round
    key: str = ""  # the settings as canonical text

    @property
    def ok(self) -> bool:
        return self.state == "COMPLETE" and bool(self.runs)

    @property
    def interrupted(self) -> bool:
        """A search trial failed by another worker because its own stopped before telling it."""
        return self.kind == TRIAL and self.state == "FAIL" and "result" not in self.attrs


def _record(t: FrozenTrial) -> Record:
    a = {**t.user_attrs, **t.user_attrs.get("result", {})}  # a search trial's outcome is told in one attribute
    interrupted = t.state == TrialState.FAIL and "result" not in t.user_attrs and a.get("kind", TRIAL) == TRIAL
    return Record(number=t.number, trial_id=t._trial_id, kind=a.get("kind", TRIAL), state=t.state.name,
                  settings=a.get("settings", {}), runs=tuple(a.get("runs", ())), signature=a.get("signature"),
                  error="interrupted: its worker stopped before finishing it" if interrupted else a.get("error"),
                  duplicate_of=a.get("duplicate_of"), cost_runs=int(a.get("cost_runs", 0)),
                  end=a.get("end"), duration_s=float(a.get("duration_s", 0.0)),
                  session=a.get("session") or (a.get("owner") or {}).get("session"), attrs=a,
                  key=canonical(a.get("settings", {})))


@dataclass
class Pool:
    """All runs of one effective configuration: trials (and training runs) that share it share its result."""
    signature: str
    runs: list[float] = field(default_factory=list)
    first: int | None = None  # the record that measured it first
    settings: dict = field(default_factory=dict)
    median: float | None = None  # of its runs, kept up to date by add

    def add(self, runs) -> None:
        self.runs.extend(runs)
        self.median = statistics.median(self.runs) if self.runs else None


@dataclass(frozen=True)
class Point:
    """The study's state just after a run finished: the trajectory RoTI and the curve are made of."""
    at_s: float  # tuning time
    kind: str  # the record's kind
    number: int
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


# ---- storage ----

def _sqlite_path(url: str) -> Path | None:
    return Path(url[len("sqlite:///"):]) if url.startswith("sqlite:///") and url != "sqlite:///:memory:" else None


def _check_sqlite(path: Path) -> None:
    """A damaged or locked database says so, instead of failing deep inside Optuna."""
    if not path.exists():
        return
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=30)) as db:
            bad = db.execute("PRAGMA quick_check").fetchone()
            if bad and bad[0] != "ok":
                raise StudyError(f"the study database {path} is damaged ({bad[0]}); restore it from a copy or "
                                 f"start a new study with another --storage")
    except sqlite3.DatabaseError as e:
        what = "locked by another process that does not let go" if "locked" in str(e) else f"damaged ({e})"
        raise StudyError(f"the study database {path} is {what}") from None


def open_storage(url: str | optuna.storages.BaseStorage, heartbeat_s: int | None = 10):
    """An Optuna storage for a URL (or a storage object as is), with heartbeats for RDB storage."""
    if not isinstance(url, str):
        return url
    path = _sqlite_path(url)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StudyError(f"cannot create the study database in {path.parent}: {e.strerror}") from None
        _check_sqlite(path)
    try:
        engine = {"connect_args": {"timeout": 60}} if path is not None else {"pool_pre_ping": True}
        storage = optuna.storages.RDBStorage(url, engine_kwargs=engine, heartbeat_interval=heartbeat_s,
                                             grace_period=3 * heartbeat_s if heartbeat_s else None,
                                             heartbeat_stale_trial_callback=_retry_once)
    except Exception as e:  # a bad URL, an unreachable server, a damaged database
        raise StudyError(f"cannot open study storage {url}: {_db_error(e)}") from None
    if path is not None:
        # in WAL mode, NORMAL loses nothing when a process dies (only on a power cut), and spares an fsync
        # per write: a study writes a few records per run
        sqlalchemy.event.listen(storage.engine, "connect", _sqlite_pragmas)
        storage.engine.dispose()
    return storage


def _sqlite_pragmas(conn, _record) -> None:
    conn.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer: several local workers
    conn.execute("PRAGMA synchronous=NORMAL")


def _db_error(e: Exception) -> str:
    text = str(getattr(e, "orig", None) or e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if "malformed" in text or "not a database" in text:
        return f"the database is damaged ({text})"
    if "locked" in text:
        return f"the database is locked by another process ({text})"
    return text


def _retry_once(study: optuna.Study, trial: FrozenTrial | None, reason: str | None = None) -> None:
    """A trial whose worker died, or whose job the scheduler ended, is run again once, under a new number;
    other records are not retried."""
    if trial is None or trial.user_attrs.get("kind", TRIAL) != TRIAL or "retry_of" in trial.user_attrs \
            or not trial.params:
        return
    attrs = {"kind": TRIAL, "retry_of": trial.number}
    why = reason or (death_reason(trial.user_attrs.get("owner") or {}))
    if why:
        attrs["retry_reason"] = why
    study.enqueue_trial(trial.params, user_attrs=attrs, skip_if_exists=False)


def death_reason(owner: Mapping[str, Any]) -> str | None:
    """Why a worker stopped, when a batch scheduler can tell (its Slurm job ended)."""
    job = owner.get("slurm_job")
    if not job:
        return None
    try:
        from .launch import slurm
        state, _ = slurm.ended(owner.get("slurm_job_id", job), wait_s=10)
    except Exception:
        return None
    return f"its worker's {slurm.describe_end(job, state)}"


def _alive(host: str, pid: int) -> bool | None:
    """Whether a process of this host is alive; None for another host (only its heartbeat tells)."""
    if host != socket.gethostname():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Heartbeat:
    """Keeps a running record's heartbeat fresh while this worker works on it."""

    def __init__(self, storage, trial_id: int):
        self._storage, self._id = storage, trial_id
        self._interval = storage.get_heartbeat_interval() if isinstance(storage, optuna.storages.RDBStorage) else None
        self._stop = threading.Event()
        self._thread = None
        if self._interval:
            storage.record_heartbeat(trial_id)
            self._thread = threading.Thread(target=self._beat, daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._storage.record_heartbeat(self._id)
            except Exception:  # a passing database error: the next beat tries again
                pass

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()


@dataclass
class Asked:
    """A search trial this worker asked for and owns until it is told."""
    trial: optuna.trial.Trial
    index: int  # its place among the study's search trials (0, 1, ...): what the log and CSV call it
    heartbeat: _Heartbeat

    @property
    def number(self) -> int:
        return self.trial.number


class Store:
    def __init__(self, study: optuna.Study, storage, config: StudyConfig):
        self.study, self.storage, self.config = study, storage, config
        self.now: Callable[[], float] = time.time  # wall-clock time (tests give a deterministic one)
        self.session = Session(uuid.uuid4().hex[:12], socket.gethostname(), os.getpid(), self.now(), self.now())
        self._cache: dict[int, Record] = {}
        self._records: list[Record] = []
        self._sessions: list[Session] = []
        self.refresh()

    # ---- opening ----

    @classmethod
    def create(cls, storage: str | Any, name: str, config: StudyConfig, budget: Budget,
               heartbeat_s: int | None = 10) -> "Store":
        st = open_storage(storage, heartbeat_s)
        if name in _study_names(st, storage):
            raise StudyError(f"study '{name}' already exists in {storage}: add --resume to continue it, "
                             f"or choose another --study name")
        config = config.stamped()
        direction = config.objective.direction
        try:
            study = optuna.create_study(storage=st, study_name=name, direction=direction)
            study.set_user_attr(CONFIG_KEY, config.to_json())
        except Exception as e:
            raise StudyError(f"cannot create study '{name}' in {storage}: {_db_error(e)}") from None
        store = cls(study, st, config)
        store.set_budget(budget)
        return store

    @classmethod
    def open(cls, storage: str | Any, name: str, heartbeat_s: int | None = 10) -> "Store":
        st = open_storage(storage, heartbeat_s)
        if name not in _study_names(st, storage):
            raise StudyError(f"no study '{name}' in {storage} to resume")
        try:
            study = optuna.load_study(storage=st, study_name=name)
            config = StudyConfig.from_json(study.user_attrs.get(CONFIG_KEY))
        except ConfigError as e:
            raise StudyError(f"study '{name}': {e}") from None
        except Exception as e:
            raise StudyError(f"cannot read study '{name}' in {storage}: {_db_error(e)}") from None
        return cls(study, st, config)

    @property
    def name(self) -> str:
        return self.study.study_name

    # ---- the budget: the one study-level value a user may change ----

    @property
    def budget(self) -> Budget:
        b = self.study.user_attrs.get(BUDGET_KEY) or {}
        return Budget(b.get("trials"), b.get("seconds"))

    def set_budget(self, budget: Budget) -> None:
        self.study.set_user_attr(BUDGET_KEY, {"trials": budget.trials, "seconds": budget.seconds})

    # ---- sessions: a worker's stretch of tuning time ----

    def begin_session(self, scratch: str | None = None) -> None:
        """This worker's stretch of tuning starts (a new one if it had one: a span is never rewritten)."""
        known = any(s.id == self.session.id for s in self.sessions())
        self.session = Session(uuid.uuid4().hex[:12] if known else self.session.id, self.session.host,
                               self.session.pid, self.now(), self.now(), scratch)
        self._save_session()

    def touch_session(self) -> None:
        self.session = replace(self.session, last=self.now())
        self._save_session()

    def _save_session(self) -> None:
        s = self.session
        self.study.set_user_attr(f"{SESSION_PREFIX}{s.id}", {"host": s.host, "pid": s.pid, "start": s.start,
                                                              "last": s.last, "scratch": s.scratch})
        self._sessions = [x for x in self._sessions if x.id != s.id] + [s]

    def sessions(self) -> list[Session]:
        """Every worker's sessions, as of the last refresh (this worker's own is always current)."""
        return self._sessions

    def _read_sessions(self) -> list[Session]:
        out = []
        for key, v in self.study.user_attrs.items():
            if key.startswith(SESSION_PREFIX) and isinstance(v, dict):
                out.append(Session(key[len(SESSION_PREFIX):], v.get("host", ""), int(v.get("pid", 0)),
                                   float(v.get("start", 0)), float(v.get("last", 0)), v.get("scratch")))
        return out

    def dead_sessions_here(self) -> list[Session]:
        """Sessions of this host whose process is gone (a killed tuner): their scratch can go."""
        return [s for s in self.sessions() if s.id != self.session.id and _alive(s.host, s.pid) is False]

    def worker_seed(self, seed: int) -> int:
        """The study's seed for its first worker; a derived one for every later or concurrent worker, so a
        resumed or joining worker's strategy does not propose the same points again."""
        if not any(s.id != self.session.id for s in self.sessions()):
            return seed
        return (seed * 1_000_003 + int(self.session.id, 16)) % (2 ** 31)

    def in_flight(self, settings: Mapping[str, Any], before: int) -> Record | None:
        """A running search trial of another worker, asked before trial `before`, that measures these
        settings, or that has not said yet what it measures: the earlier trial measures a point, a later one
        with the same point waits for it. (A worker asks, then publishes its point: between the two, a peer
        that asked later and published first would otherwise not see it.)"""
        key = canonical(settings)
        for r in self.search_trials():
            if r.state == "RUNNING" and r.number < before and r.session != self.session.id \
                    and ("settings" not in r.attrs or r.key == key):
                return r
        return None

    def owed(self) -> list[Record]:
        """Search trials queued to run again (their worker died, or the scheduler ended their job)."""
        return [r for r in self.search_trials() if r.state == "WAITING"]

    def others_running(self) -> list[Record]:
        """Search trials other workers are running now."""
        return [r for r in self.search_trials() if r.state == "RUNNING" and r.session != self.session.id]

    def tuning_time(self) -> float:
        """The study's tuning time so far: up to the end of its last run (waiting afterwards is not tuning)."""
        return self.trajectory[-1].at_s if self.trajectory else 0.0

    def live_peers(self) -> list[Session]:
        """Other sessions that may still be working: alive on this host, or seen lately elsewhere."""
        grace = 3 * (self.storage.get_heartbeat_interval() or 10) if isinstance(
            self.storage, optuna.storages.RDBStorage) else 30
        out = []
        for s in self.sessions():
            if s.id == self.session.id:
                continue
            alive = _alive(s.host, s.pid)
            if alive or (alive is None and self.now() - s.last < grace):
                out.append(s)
        return out

    def clock(self, at: float | None = None) -> float:
        """Tuning time, in seconds: how long at least one worker was working on the study, up to wall time
        `at` (default now). Sessions overlap when workers run side by side; a session's end is its last sign
        of life, or now for this worker's own."""
        return self._clock_at([self.now() if at is None else at], self.sessions())[0]

    def _clock_at(self, times: list[float], sessions: list[Session]) -> list[float]:
        out = []
        for now in times:
            spans = sorted((s.start, min(now, now if s.id == self.session.id else s.last)) for s in sessions)
            total, reach = 0.0, float("-inf")
            for start, end in spans:
                if end > max(start, reach):
                    total += end - max(start, reach)
                    reach = end
            out.append(total)
        return out

    # ---- derived state ----

    def refresh(self) -> None:
        """Reads the records again (another worker may have added some) and derives everything from them."""
        records = []
        for t in self.study.get_trials(deepcopy=False):
            cached = self._cache.get(t._trial_id)
            if cached is None or cached.state != t.state.name or not t.state.is_finished():
                cached = _record(t)
                if t.state.is_finished():
                    self._cache[t._trial_id] = cached
            records.append(cached)
        records.sort(key=lambda r: r.number)
        self._records = records
        self._sessions = self._read_sessions()
        self._derive()

    def _derive(self) -> None:
        """Pools, the default's runs and the trajectory, from the records in the order they finished."""
        self.reference = self._reference()
        self.default_runs: list[float] = []
        self.pools: dict[str, Pool] = {}
        self.requested: dict[str, tuple[int, str]] = {}  # canonical settings -> (first record, signature)
        self.failed: dict[str, int] = {}  # canonical settings that failed -> the record
        self.trajectory: list[Point] = []
        key = (lambda v: v) if self.config.objective.direction == "maximize" else (lambda v: -v)
        finished = sorted((r for r in self._records if r.end is not None and r.kind in RUN_KINDS),
                          key=lambda r: (r.end, r.number))
        times = self._clock_at([r.end for r in finished], self.sessions())
        best: Pool | None = None
        for r, at in zip(finished, times):
            pool = None
            if r.kind == BASELINE and r.ok:
                self.default_runs.extend(r.runs)
            elif r.kind in (TRIAL, TRAINING):
                k = r.key
                if r.state == "FAIL" and r.cost_runs and not r.interrupted and not r.attrs.get("retryable"):
                    self.failed.setdefault(k, r.number)
                if r.state == "COMPLETE" and r.signature is not None:
                    self.requested.setdefault(k, (r.number, r.signature))
                    if r.duplicate_of == DEFAULT:
                        self.default_runs.extend(r.runs)
                    else:
                        pool = self.pools.setdefault(r.signature, Pool(r.signature, first=r.number,
                                                                       settings=r.settings))
                        pool.add(r.runs)
                        if best is None or pool is best or key(pool.median) > key(best.median):
                            best = max(self.pools.values(), key=lambda p: key(p.median))
            default = statistics.median(self.default_runs) if self.default_runs else None
            if pool is not None:
                value = pool.median
            elif r.ok and (r.kind == BASELINE or r.duplicate_of == DEFAULT):
                value = default
            else:
                value = r.runs[0] if r.ok else None
            self.trajectory.append(Point(
                at_s=at, kind=r.kind, number=r.number, ok=r.ok, value=value,
                best=best.median if best else None, best_runs=len(best.runs) if best else 0,
                default=default, default_runs=len(self.default_runs)))

    def _reference(self) -> dict[str, str] | None:
        for r in self.records(BASELINE):
            if r.ok and isinstance(r.attrs.get("reference"), dict):
                return r.attrs["reference"]
        return None

    def records(self, *kinds: str) -> list[Record]:
        return [r for r in self._records if not kinds or r.kind in kinds]

    def search_trials(self) -> list[Record]:
        return self.records(TRIAL)

    def completed(self) -> list[Record]:
        return [r for r in self.search_trials() if r.state == "COMPLETE"]

    def index_of(self, number: int) -> int:
        """A search trial's place among the study's search trials."""
        return sum(1 for r in self.search_trials() if r.number < number)

    def trials_run(self) -> int:
        """Search trials that cost a run: the trial budget counts these. A re-proposed point costs none, and a
        trial interrupted (its worker died) or ended by the scheduler is run again instead."""
        return sum(1 for r in self.search_trials() if r.state in ("COMPLETE", "FAIL") and r.cost_runs > 0
                   and not r.interrupted and not r.attrs.get("retryable"))

    def signature(self, effective: Mapping[str, list[str]]) -> str:
        return signature(effective, self.reference or {}, self.config.nodes)

    def default_signatures(self) -> set[str]:
        return {r.signature for r in self.records(BASELINE) if r.ok and r.signature is not None}

    def default_value(self) -> float | None:
        return statistics.median(self.default_runs) if self.default_runs else None

    def value_of(self, sig: str) -> float | None:
        """The current result of an effective configuration: the median of all its runs."""
        if sig in self.default_signatures():
            return self.default_value()
        pool = self.pools.get(sig)
        return pool.median if pool else None

    def current_values(self) -> dict[int, float]:
        """Every completed search trial's value as it stands now (its configuration's median)."""
        out = {}
        for r in self.completed():
            v = self.value_of(r.signature) if r.signature is not None else None
            if v is not None:
                out[r.number] = v
        return out

    def ranked_pools(self, key) -> list[Pool]:
        """Configurations other than the default, best first by their current median (key: higher is better)."""
        default = self.default_signatures()
        pools = [p for p in self.pools.values() if p.runs and p.signature not in default]
        return sorted(pools, key=lambda p: key(p.median), reverse=True)

    # ---- writing records ----

    def add_run(self, kind: str, *, settings: Mapping[str, Any], value: float | None, error: str | None = None,
                signature: str | None = None, duration_s: float = 0.0, attrs: Mapping[str, Any] | None = None) -> Record:
        """One finished run of the default, a training point or the confirmation round, recorded at once."""
        assert kind in (BASELINE, TRAINING, CONFIRMATION)
        a = {"kind": kind, "id": uuid.uuid4().hex, "settings": dict(settings), "runs": [value] if value is not None else [],
             "signature": signature, "cost_runs": 1, "end": self.now(), "duration_s": duration_s,
             "session": self.session.id, **(attrs or {})}
        if error is not None:
            a["error"] = error
        t = optuna.trial.create_trial(state=TrialState.COMPLETE if value is not None else TrialState.FAIL,
                                      value=value, user_attrs=_clean(a))
        self.study.add_trial(t)
        self.touch_session()
        self.refresh()
        return self._find(a["id"])

    def _find(self, rid: str) -> Record:
        return next(r for r in reversed(self._records) if r.attrs.get("id") == rid)

    def ask(self) -> Asked:
        """A new search trial, owned by this worker (heartbeat) until it is told."""
        trial = self.study.ask()
        beat = _Heartbeat(self.storage, trial._trial_id)
        trial.set_user_attr("kind", TRIAL)
        trial.set_user_attr("owner", self.owner())
        self.refresh()
        return Asked(trial, self.index_of(trial.number), beat)

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

    def proposed(self, asked: Asked, settings: Mapping[str, Any], why: str | None = None) -> None:
        """The point a search trial runs, as flat settings (readable in the study even if it never finishes),
        and why the strategy proposed it."""
        asked.trial.set_user_attr("settings", _clean(settings))
        if why:
            asked.trial.set_user_attr("why", why)

    def tell(self, asked: Asked, *, settings: Mapping[str, Any], runs: list[float], signature: str | None,
             error: str | None, cost_runs: int, duration_s: float, duplicate_of: int | str | None = None,
             value: float | None = None, retry: bool = False) -> Record:
        """Finishes a search trial: its runs, what took effect, or why it failed (one attribute, one write).
        retry: a failure that was not the settings' doing (the scheduler ended the job): run once more."""
        t = asked.trial
        result = {"settings": dict(settings), "runs": runs, "signature": signature, "cost_runs": cost_runs,
                  "duration_s": duration_s, "end": self.now()}
        if duplicate_of is not None:
            result["duplicate_of"] = duplicate_of
        if error is not None:
            result["error"] = error
        if retry:
            result["retryable"] = True
        try:
            t.set_user_attr("result", _clean(result))
            if error is None and value is not None:
                self.study.tell(t, value)
            else:
                self.study.tell(t, state=TrialState.FAIL)
        finally:
            asked.heartbeat.stop()
        if retry and error is not None:
            _retry_once(self.study, self.storage.get_trial(t._trial_id), reason=error)
        self.touch_session()
        self.refresh()
        return next(r for r in reversed(self.records()) if r.number == t.number)

    def abandon(self, asked: Asked, why: str) -> None:
        """A trial this worker cannot finish (its own I/O failed): failed and not run again, with the reason."""
        try:
            asked.trial.set_user_attr("result", {"error": why, "end": self.now()})
            self.study.tell(asked.trial, state=TrialState.FAIL)
        finally:
            asked.heartbeat.stop()
        self.refresh()

    # ---- recovery ----

    def recover(self) -> list[int]:
        """Running records whose worker is gone: failed, and search trials queued to run again once.

        A worker on this host that no longer exists is recognized at once; any other only when its
        heartbeat goes stale. A live peer's running record is never touched."""
        numbers = []
        for r in self.records():
            owner = r.attrs.get("owner") or {}
            if r.state != "RUNNING" or _alive(owner.get("host", ""), int(owner.get("pid") or 0)) is not False:
                continue
            if self._fail(r):
                numbers.append(r.number)
        if isinstance(self.storage, optuna.storages.RDBStorage):
            optuna.storages.fail_stale_trials(self.study)
        self.refresh()
        return numbers

    def _fail(self, r: Record) -> bool:
        """Fails another worker's running record (False if someone else finished it first)."""
        try:
            if not self.storage.set_trial_state_values(r.trial_id, TrialState.FAIL):
                return False
        except optuna.exceptions.UpdateFinishedTrialError:
            return False  # its worker, or another one, finished it first
        _retry_once(self.study, self.storage.get_trial(r.trial_id))
        return True

    # ---- exclusive sections ----

    @contextlib.contextmanager
    def exclusive(self, name: str, key: str, content: Mapping[str, Any] | None = None,
                  poll_s: float = 1.0) -> Iterator[bool]:
        """One worker at a time runs the section (name, key); yields True to the one that should run it and
        False once another worker has completed it. A holder that dies releases it (heartbeat)."""
        attrs = {"kind": LOCK, "id": uuid.uuid4().hex, "lock": name, "key": key, "session": self.session.id,
                 "owner": self.owner(), **(content or {})}
        mine = optuna.trial.create_trial(state=TrialState.RUNNING, user_attrs=_clean(attrs))
        self.study.add_trial(mine)
        self.refresh()
        me = self._find(attrs["id"])
        beat = _Heartbeat(self.storage, me.trial_id)
        try:
            while True:
                self.recover()
                rivals = [r for r in self.records(LOCK) if r.attrs.get("lock") == name
                          and r.attrs.get("key") == key and r.number != me.number]
                if any(r.state == DONE for r in rivals):
                    self.storage.set_trial_user_attr(me.trial_id, "released", "completed by another worker")
                    self.storage.set_trial_state_values(me.trial_id, TrialState.FAIL)
                    beat.stop()
                    yield False
                    return
                if not any(r.state == "RUNNING" and r.number < me.number for r in rivals):
                    break
                time.sleep(poll_s)
            try:
                yield True
            except BaseException:
                self.storage.set_trial_state_values(me.trial_id, TrialState.FAIL)
                raise
            self.storage.set_trial_state_values(me.trial_id, TrialState.PRUNED)  # done: finished, no measurement
        finally:
            beat.stop()
            self.refresh()

    def lock_content(self, name: str, key: str) -> Mapping[str, Any] | None:
        """What the holder of a section recorded (the confirmation's candidates), from its latest record."""
        held = [r for r in self.records(LOCK) if r.attrs.get("lock") == name and r.attrs.get("key") == key]
        return held[-1].attrs if held else None


def _clean(attrs: Mapping[str, Any]) -> dict:
    """JSON-safe user attributes (numbers as numbers, the rest as text)."""
    return json.loads(json.dumps(dict(attrs), default=str))


def _study_names(storage, url) -> set[str]:
    try:
        return {s.study_name for s in optuna.get_all_study_summaries(storage=storage, include_best_trial=False)}
    except Exception as e:  # a corrupt or unreachable database
        raise StudyError(f"cannot open study storage {url}: {_db_error(e)}") from None
