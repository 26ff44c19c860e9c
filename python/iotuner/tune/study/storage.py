"""Where a study's records live: Optuna storage (SQLite, PostgreSQL, or in memory).

A study is two Optuna studies. The study itself holds the search trials only,
so `study.best_trial`, `optuna best-trial` and optuna-dashboard's best trial are
search trials, as an Optuna user expects. Its companion, NAME.iotuner, holds
the other runs (baseline, training, confirmation) as trials, and as study
attributes the budget, the workers' sessions and the leases. The study's
configuration is an attribute of the study itself.

Reading is incremental: each read returns the trials created since the last
one, and those that were not finished then (running, or waiting to run again);
finished trials never change. On an RDB storage this is one query for the
trials and one for their attributes, whatever the size of the study; trials are
written in one transaction each, with their parameters and attributes, and
finished with one conditional update (a trial another worker finished first is
left alone). Other storages go through Optuna's storage API.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from .. import optuna_compat
from .records import Row, clean
from .urls import mask

COMPANION = ".iotuner"  # the companion study's name: NAME.iotuner
CONFIG_KEY = "iotuner"  # the configuration, on the study itself
BUDGET_KEY = "budget"  # on the companion, like the sessions and the leases
SESSION_PREFIX = "session:"
LEASE_PREFIX = "lease:"

optuna.logging.set_verbosity(optuna.logging.WARNING)


class StudyError(RuntimeError):
    pass


# ---- opening a storage ----


def sqlite_path(url: str) -> Path | None:
    return Path(url[len("sqlite:///") :]) if url.startswith("sqlite:///") and url != "sqlite:///:memory:" else None


def _check_sqlite(path: Path) -> None:
    """A damaged or locked database says so, instead of failing deep inside Optuna."""
    if not path.exists():
        return
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=30)) as db:
            bad = db.execute("PRAGMA quick_check").fetchone()
            if bad and bad[0] != "ok":
                raise StudyError(
                    f"the study database {path} is damaged ({bad[0]}); restore it from a copy or "
                    f"start a new study with another --storage"
                )
    except sqlite3.DatabaseError as e:
        what = "locked by another process that does not let go" if "locked" in str(e) else f"damaged ({e})"
        raise StudyError(f"the study database {path} is {what}") from None


def db_error(e: BaseException) -> str:
    """The driver's own first line, not the statement SQLAlchemy adds."""
    cause: BaseException = e
    while getattr(cause, "orig", None) is not None or cause.__cause__ is not None:
        cause = getattr(cause, "orig", None) or cause.__cause__  # type: ignore[assignment]
    lines = str(cause).strip().splitlines()
    text = lines[0] if lines else type(cause).__name__
    if "malformed" in text or "not a database" in text:
        return f"the database is damaged ({text})"
    if "locked" in text:
        return f"the database is locked by another process ({text})"
    return text


def _sqlite_pragmas(conn, _record) -> None:
    conn.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer: several local workers
    # in WAL mode, NORMAL loses nothing when a process dies (only on a power cut), and spares an fsync per write
    conn.execute("PRAGMA synchronous=NORMAL")


@contextlib.contextmanager
def _schema_lock(url: str, path: Path | None, engine_kwargs: dict) -> Iterator[None]:
    """One process at a time creates the schema of a new database (two at once collide in Optuna's
    alembic_version table)."""
    if path is not None:
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock
        return
    import sqlalchemy

    engine = sqlalchemy.create_engine(url, **engine_kwargs)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                conn.execute(sqlalchemy.text("SELECT pg_advisory_lock(7142021)"))
            try:
                yield
            finally:
                if engine.dialect.name == "postgresql":
                    conn.execute(sqlalchemy.text("SELECT pg_advisory_unlock(7142021)"))
    finally:
        engine.dispose()


def _schema_ready(url: str, engine: dict) -> bool:
    """Whether the database has Optuna's schema in the version this Optuna writes, stamped for alembic: read
    with a plain connection, since opening an Optuna storage on a schema still being created stamps it a
    second time (and collides with the process creating it)."""
    import sqlalchemy

    eng = sqlalchemy.create_engine(url, **engine)
    try:
        with eng.connect() as conn:
            version = conn.execute(sqlalchemy.text("SELECT schema_version FROM version_info")).scalar()
            stamped = conn.execute(sqlalchemy.text("SELECT version_num FROM alembic_version")).scalar()
    except sqlalchemy.exc.SQLAlchemyError:
        return False
    finally:
        eng.dispose()
    return version == optuna_compat.schema_version() and stamped is not None


def _existing(url: str, engine: dict):
    """The storage of a database that has the schema already, opened without creating or checking it (the
    slow part of opening); None when it has not."""
    if not _schema_ready(url, engine):
        return None
    return optuna.storages.RDBStorage(
        url, engine_kwargs=dict(engine), skip_table_creation=True, skip_compatibility_check=True
    )


def open_storage(url: str | optuna.storages.BaseStorage) -> optuna.storages.BaseStorage:
    """An Optuna storage for a URL (or a storage object as is). The schema is created once, by one process,
    the first time; later opens only check its version."""
    if not isinstance(url, str):
        return url
    if not url.strip():
        raise StudyError(
            "the study storage URL is empty: give an SQLAlchemy URL, or leave --storage out for "
            "the SQLite database in the output directory"
        )
    path = sqlite_path(url)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StudyError(f"cannot create the study database in {path.parent}: {e.strerror}") from None
        _check_sqlite(path)
    # a server's connections are recycled before idle timeouts cut them, and not pinged at every use, which
    # would double the round trips of a trial; one a restarted server dropped fails once, with its reason
    engine = {"connect_args": {"timeout": 60}} if path is not None else {"pool_recycle": 1800}
    try:
        quiet_driver_logs()
        storage = None
        if path is None or path.exists():
            storage = _existing(url, engine)
        if storage is None:
            with _schema_lock(url, path, dict(engine)):
                storage = optuna.storages.RDBStorage(url, engine_kwargs=dict(engine))
    except StudyError:
        raise
    except Exception as e:  # a bad URL, an unreachable server, a damaged database
        raise StudyError(f"cannot open study storage {mask(url)}: {db_error(e)}") from None
    if path is not None:
        import sqlalchemy

        sqlalchemy.event.listen(storage.engine, "connect", _sqlite_pragmas)
        storage.engine.dispose()
    return storage


def quiet_driver_logs() -> None:
    """A database that goes away is reported in one line by the tuner, not by SQLAlchemy's and Optuna's
    loggers (which would print the failed statement)."""
    import logging

    for name in ("sqlalchemy", "sqlalchemy.pool", "sqlalchemy.engine", "optuna", "alembic"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def study_names(storage, url) -> set[str]:
    """The storage's study names (without reading their trials, as Optuna's study summaries do)."""
    try:
        return {s.study_name for s in storage.get_all_studies()}
    except Exception as e:  # a corrupt or unreachable database
        raise StudyError(
            f"cannot open study storage {mask(url) if isinstance(url, str) else url}: {db_error(e)}"
        ) from None


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)  # Optuna keeps naive UTC


# ---- the two backends: Optuna's tables directly (RDB), or Optuna's storage API (any other) ----


class StudyBackend(ABC):
    """How the store reads and writes a study's trials and attributes (as Optuna's BaseStorage is for Optuna).
    Trials are given as (value, distribution) params and JSON attributes; states by TrialState name."""

    has_heartbeats: bool  # whether `beat` and `stale` keep a running trial's heartbeat

    @abstractmethod
    def read(
        self, studies: Mapping[int, bool], after: Mapping[int, int], open_ids: set[int], attrs_of: int | None = None
    ) -> tuple[list[Row], dict | None]:
        """Trials of these studies ({study id: holds search trials}) created after `after[study]` or among
        open_ids; and the attributes of study attrs_of, if given."""

    @abstractmethod
    def create(
        self,
        sid: int,
        state: str,
        attrs: Mapping[str, Any],
        params: Mapping[str, tuple[Any, Any]] | None = None,
        value: float | None = None,
        heartbeat: bool = False,
        touch: tuple | None = None,
    ) -> tuple[int, int]:
        """A new trial with its params and attributes (and touch: (study, key, value) to set): (id, number)."""

    @abstractmethod
    def publish(self, tid: int, params: Mapping[str, tuple[Any, Any]], attrs: Mapping[str, Any]) -> None:
        """A running trial's params and more attributes."""

    @abstractmethod
    def finish(
        self, tid: int, state: str, attrs: Mapping[str, Any], value: float | None = None, touch: tuple | None = None
    ) -> bool:
        """Finishes a running trial; False (nothing written) when it is not running any more."""

    @abstractmethod
    def claim(self, tid: int, attrs: Mapping[str, Any]) -> bool:
        """A waiting trial, running for this worker; False when another took it first."""

    @abstractmethod
    def params(self, tid: int) -> dict[str, tuple[Any, Any]]:
        """A trial's params: {name: (value, distribution)}."""

    @abstractmethod
    def study_attrs(self, sid: int) -> dict[str, Any]: ...

    @abstractmethod
    def set_study_attr(self, sid: int, key: str, value: Any) -> None: ...

    @abstractmethod
    def swap_study_attr(self, sid: int, key: str, old: Any, new: Any) -> bool:
        """Sets the attribute to new if it is old (None: absent), atomically; True for the one that succeeds."""

    @abstractmethod
    def beat(self, tid: int) -> None:
        """A running trial's heartbeat, now."""

    @abstractmethod
    def stale(self, tids: list[int], grace_s: float) -> list[int]:
        """Which of these running trials' heartbeats are older than grace_s."""


class ApiBackend(StudyBackend):
    """Any Optuna storage, through its API (the in-memory storage of tests and benchmarks): one process."""

    def __init__(self, storage):
        self.storage = storage
        self._lock = threading.Lock()
        self.has_heartbeats = False

    def read(
        self, studies: Mapping[int, bool], after: Mapping[int, int], open_ids: set[int], attrs_of: int | None = None
    ) -> tuple[list[Row], dict | None]:
        out = []
        for sid, search in studies.items():
            for t in self.storage.get_all_trials(sid, deepcopy=False):
                tid = self.storage.get_trial_id_from_study_id_trial_number(sid, t.number)
                if tid > after.get(sid, -1) or tid in open_ids:
                    out.append(Row(tid, t.number, t.state.name, dict(t.user_attrs), search, sid))
        return out, None if attrs_of is None else self.study_attrs(attrs_of)

    def create(
        self,
        sid: int,
        state: str,
        attrs: Mapping[str, Any],
        params=None,
        value: float | None = None,
        heartbeat: bool = False,
        touch: tuple | None = None,
    ) -> tuple[int, int]:
        params = params or {}
        finished = TrialState[state].is_finished()
        template = FrozenTrial(
            number=-1,
            state=TrialState[state],
            value=value,
            values=None,
            datetime_start=dt.datetime.now(),
            datetime_complete=dt.datetime.now() if finished else None,
            params={k: v for k, (v, _) in params.items()},
            distributions={k: d for k, (_, d) in params.items()},
            user_attrs=clean(attrs),
            system_attrs={},
            intermediate_values={},
            trial_id=-1,
        )
        tid = self.storage.create_new_trial(sid, template)
        if touch:
            self.set_study_attr(*touch)
        return tid, self.storage.get_trial(tid).number

    def publish(self, tid: int, params, attrs: Mapping[str, Any]) -> None:
        for name, (value, dist) in params.items():
            self.storage.set_trial_param(tid, name, dist.to_internal_repr(value), dist)
        for k, v in clean(attrs).items():
            self.storage.set_trial_user_attr(tid, k, v)

    def finish(
        self, tid: int, state: str, attrs: Mapping[str, Any], value: float | None = None, touch: tuple | None = None
    ) -> bool:
        with self._lock:
            try:
                if self.storage.get_trial(tid).state != TrialState.RUNNING:
                    return False
                for k, v in clean(attrs).items():
                    self.storage.set_trial_user_attr(tid, k, v)
                done = self.storage.set_trial_state_values(tid, TrialState[state], None if value is None else [value])
            except optuna.exceptions.UpdateFinishedTrialError:
                return False
        if done and touch:
            self.set_study_attr(*touch)
        return done

    def claim(self, tid: int, attrs: Mapping[str, Any]) -> bool:
        with self._lock:
            if not self.storage.set_trial_state_values(tid, TrialState.RUNNING):
                return False
            for k, v in clean(attrs).items():
                self.storage.set_trial_user_attr(tid, k, v)
            return True

    def params(self, tid: int) -> dict:
        t = self.storage.get_trial(tid)
        return {k: (v, t.distributions[k]) for k, v in t.params.items()}

    def study_attrs(self, sid: int) -> dict[str, Any]:
        return self.storage.get_study_user_attrs(sid)

    def set_study_attr(self, sid: int, key: str, value: Any) -> None:
        self.storage.set_study_user_attr(sid, key, clean({"v": value})["v"])

    def swap_study_attr(self, sid: int, key: str, old: Any, new: Any) -> bool:
        """Sets the attribute to new if it is old (None: absent); atomic (one process)."""
        with self._lock:
            if self.storage.get_study_user_attrs(sid).get(key) != (None if old is None else clean({"v": old})["v"]):
                return False
            self.set_study_attr(sid, key, new)
            return True

    def beat(self, tid: int) -> None:
        pass

    def stale(self, tids: list[int], grace_s: float) -> list[int]:
        return []


class SqlBackend(StudyBackend):
    """Optuna's tables in an SQL database, read and written in a few statements per trial."""

    def __init__(self, rdb: optuna.storages.RDBStorage):
        import sqlalchemy

        t = optuna_compat.tables()
        self.sa, self.engine = sqlalchemy, rdb.engine
        self.T, self.A, self.P, self.V = t.trials, t.trial_user_attrs, t.trial_params, t.trial_values
        self.H, self.S, self.SA = t.trial_heartbeats, t.studies, t.study_user_attrs
        self.value_repr = optuna_compat.stored_value
        self.lock_study = self.engine.dialect.name != "sqlite"  # SQLite has one writer at a time anyway
        self.has_heartbeats = True

    def read(
        self, studies: Mapping[int, bool], after: Mapping[int, int], open_ids: set[int], attrs_of: int | None = None
    ) -> tuple[list[Row], dict | None]:
        """(trials new since `after` or among open_ids, with their attributes; and the attributes of study
        attrs_of, if given), on one connection: two or three queries."""
        sa, T, A = self.sa, self.T, self.A
        which = sa.or_(
            *[sa.and_(T.c.study_id == sid, T.c.trial_id > after.get(sid, -1)) for sid in studies],
            *([T.c.trial_id.in_(sorted(open_ids))] if open_ids else []),
        )
        attrs: dict[int, dict] = {}
        with self.engine.connect() as conn:
            trials = conn.execute(sa.select(T.c.trial_id, T.c.number, T.c.state, T.c.study_id).where(which)).all()
            if trials:
                for tid, key, value in conn.execute(
                    sa.select(A.c.trial_id, A.c.key, A.c.value_json).join(T, A.c.trial_id == T.c.trial_id).where(which)
                ):
                    attrs.setdefault(tid, {})[key] = json.loads(value)
            study = None if attrs_of is None else self._study_attrs(conn, attrs_of)
        return [
            Row(tid, number, state.name, attrs.get(tid, {}), studies[sid], sid)
            for tid, number, state, sid in sorted(trials)
        ], study

    def create(
        self,
        sid: int,
        state: str,
        attrs: Mapping[str, Any],
        params=None,
        value: float | None = None,
        heartbeat: bool = False,
        touch: tuple | None = None,
    ) -> tuple[int, int]:
        """A new trial with its parameters and attributes (and touch: a study attribute to set), in one
        transaction; its number, its place in the study, is found in the insert itself (SQLite has one writer
        at a time; elsewhere the study's row is locked first, as Optuna does)."""
        sa, T = self.sa, self.T
        now = _utcnow()
        # the last trial's number and one: numbers are given in the order of ids, so this is the number of
        # trials before it (what Optuna counts), found at the end of the index instead of by counting them all
        last = sa.select(T.c.number).where(T.c.study_id == sid).order_by(T.c.trial_id.desc()).limit(1)
        number = sa.func.coalesce(last.scalar_subquery(), -1) + 1
        insert = T.insert().values(
            study_id=sid,
            number=number,
            state=TrialState[state],
            datetime_start=now,
            datetime_complete=now if TrialState[state].is_finished() else None,
        )
        with self.engine.begin() as conn:
            if self.lock_study:  # held until the commit: the trials before this one are all committed
                conn.execute(sa.select(self.S.c.study_id).where(self.S.c.study_id == sid).with_for_update())
            if self.engine.dialect.insert_returning:
                tid, number = conn.execute(insert.returning(T.c.trial_id, T.c.number)).one()
            else:
                tid = conn.execute(insert).inserted_primary_key[0]  # type: ignore[index]
                number = conn.execute(sa.select(T.c.number).where(T.c.trial_id == tid)).scalar()
            self._write(conn, tid, params or {}, attrs, value)
            if heartbeat:
                conn.execute(self.H.insert().values(trial_id=tid, heartbeat=sa.func.now()))
            if touch:
                self._set_attr(conn, *touch)
        return tid, number

    def _write(self, conn, tid: int, params, attrs: Mapping[str, Any], value: float | None = None) -> None:
        from optuna.distributions import distribution_to_json

        if params:
            conn.execute(
                self.P.insert(),
                [
                    {
                        "trial_id": tid,
                        "param_name": name,
                        "param_value": dist.to_internal_repr(v),
                        "distribution_json": distribution_to_json(dist),
                    }
                    for name, (v, dist) in params.items()
                ],
            )
        if attrs:
            conn.execute(
                self.A.insert(),
                [{"trial_id": tid, "key": k, "value_json": json.dumps(v)} for k, v in clean(attrs).items()],
            )
        if value is not None:
            stored, kind = self.value_repr(value)
            conn.execute(self.V.insert().values(trial_id=tid, objective=0, value=stored, value_type=kind))

    def publish(self, tid: int, params, attrs: Mapping[str, Any]) -> None:
        with self.engine.begin() as conn:
            self._write(conn, tid, params, attrs)

    def finish(
        self, tid: int, state: str, attrs: Mapping[str, Any], value: float | None = None, touch: tuple | None = None
    ) -> bool:
        """Finishes a running trial (and sets the study attribute touch); False (and nothing written) when it
        is not running any more."""
        T = self.T
        with self.engine.begin() as conn:
            done = conn.execute(
                T.update()
                .where(T.c.trial_id == tid, T.c.state == TrialState.RUNNING)
                .values(state=TrialState[state], datetime_complete=_utcnow())
            )
            if done.rowcount != 1:
                return False
            self._write(conn, tid, {}, attrs, value)
            if touch:
                self._set_attr(conn, *touch)
        return True

    def claim(self, tid: int, attrs: Mapping[str, Any]) -> bool:
        """A trial waiting to run again, taken by this worker; False when another took it first."""
        T = self.T
        with self.engine.begin() as conn:
            done = conn.execute(
                T.update()
                .where(T.c.trial_id == tid, T.c.state == TrialState.WAITING)
                .values(state=TrialState.RUNNING, datetime_start=_utcnow())
            )
            if done.rowcount != 1:
                return False
            self._write(conn, tid, {}, attrs)
            conn.execute(self.H.insert().values(trial_id=tid, heartbeat=self.sa.func.now()))
        return True

    def params(self, tid: int) -> dict:
        from optuna.distributions import json_to_distribution

        with self.engine.connect() as conn:
            rows = conn.execute(
                self.sa.select(self.P.c.param_name, self.P.c.param_value, self.P.c.distribution_json).where(
                    self.P.c.trial_id == tid
                )
            ).all()
        out = {}
        for name, internal, text in rows:
            dist = json_to_distribution(text)
            out[name] = (dist.to_external_repr(internal), dist)
        return out

    def study_attrs(self, sid: int) -> dict[str, Any]:
        with self.engine.connect() as conn:
            return self._study_attrs(conn, sid)

    def _study_attrs(self, conn, sid: int) -> dict[str, Any]:
        SA = self.SA
        rows = conn.execute(self.sa.select(SA.c.key, SA.c.value_json).where(SA.c.study_id == sid)).all()
        return {k: json.loads(v) for k, v in rows}

    def set_study_attr(self, sid: int, key: str, value: Any) -> None:
        with self.engine.begin() as conn:
            self._set_attr(conn, sid, key, value)

    def _set_attr(self, conn, sid: int, key: str, value: Any) -> None:
        """Only its owner writes a key (a session, the budget): an update, or the first insert."""
        SA, text = self.SA, json.dumps(clean({"v": value})["v"])
        done = conn.execute(SA.update().where(SA.c.study_id == sid, SA.c.key == key).values(value_json=text))
        if done.rowcount == 0:
            conn.execute(SA.insert().values(study_id=sid, key=key, value_json=text))

    def swap_study_attr(self, sid: int, key: str, old: Any, new: Any) -> bool:
        """Sets the attribute to new if it is old (None: absent), atomically: an insert that the unique key
        refuses, or an update conditional on the old value. True for the one worker that succeeds."""
        SA, text = self.SA, json.dumps(clean({"v": new})["v"])
        try:
            with self.engine.begin() as conn:
                if old is None:
                    conn.execute(SA.insert().values(study_id=sid, key=key, value_json=text))
                    return True
                was = json.dumps(clean({"v": old})["v"])
                done = conn.execute(
                    SA.update()
                    .where(SA.c.study_id == sid, SA.c.key == key, SA.c.value_json == was)
                    .values(value_json=text)
                )
                return done.rowcount == 1
        except self.sa.exc.IntegrityError:
            return False

    def beat(self, tid: int) -> None:
        with self.engine.begin() as conn:
            conn.execute(self.H.update().where(self.H.c.trial_id == tid).values(heartbeat=self.sa.func.now()))

    def stale(self, tids: list[int], grace_s: float) -> list[int]:
        """Which of these running trials' heartbeats are older than grace_s, by the database's clock."""
        if not tids:
            return []
        H, sa = self.H, self.sa
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(H.c.trial_id, H.c.heartbeat, sa.func.now()).where(H.c.trial_id.in_(tids))
            ).all()
        return [
            tid
            for tid, beat, now in rows
            if beat is not None and (now.replace(tzinfo=None) - beat).total_seconds() > grace_s
        ]


def backend(storage: optuna.storages.BaseStorage) -> StudyBackend:
    return SqlBackend(storage) if isinstance(storage, optuna.storages.RDBStorage) else ApiBackend(storage)


# ---- a study and its companion ----


class StudyStorage:
    """The study (search trials) and its companion (the other records, the budget, sessions and leases)."""

    def __init__(self, storage, study: optuna.Study, companion_id: int):
        self.storage, self.study, self.companion_id = storage, study, companion_id
        self.study_id = storage.get_study_id_from_name(study.study_name)
        self.backend = backend(storage)
        self.studies = {self.study_id: True, companion_id: False}
        self._sampled = optuna.storages.get_storage(storage)  # the samplers' view: Optuna's cache, read incrementally
        self._after: dict[int, int] = {}

    @property
    def name(self) -> str:
        return self.study.study_name

    @classmethod
    def create(cls, url, name: str, direction: str, config: dict) -> StudyStorage:
        st = open_storage(url)
        if name in study_names(st, url) or name + COMPANION in study_names(st, url):
            raise StudyError(
                f"study '{name}' already exists in {_shown(url)}: add --resume to continue it, "
                f"or choose another --study name"
            )
        try:
            study = optuna.create_study(storage=st, study_name=name, direction=direction)  # type: ignore[arg-type]
            optuna.create_study(storage=st, study_name=name + COMPANION, direction=direction)  # type: ignore[arg-type]
            study.set_user_attr(CONFIG_KEY, config)
        except optuna.exceptions.DuplicatedStudyError:
            raise StudyError(
                f"study '{name}' was just created in {_shown(url)} by another process: add --resume to join it"
            ) from None
        except Exception as e:
            raise StudyError(f"cannot create study '{name}' in {_shown(url)}: {db_error(e)}") from None
        return cls(st, study, st.get_study_id_from_name(name + COMPANION))

    @classmethod
    def delete(cls, url, name: str) -> None:
        """Removes the study and its companion (a study that measured nothing, started again)."""
        st = open_storage(url)
        try:
            for study in (name + COMPANION, name):
                if study in study_names(st, url):
                    optuna.delete_study(study_name=study, storage=st)
        except Exception as e:
            raise StudyError(f"cannot remove study '{name}' in {_shown(url)}: {db_error(e)}") from None

    @classmethod
    def open(cls, url, name: str) -> tuple[StudyStorage, Any]:
        """(the study, its stored configuration)."""
        st = open_storage(url)
        names = study_names(st, url)
        if name not in names:
            raise StudyError(f"no study '{name}' in {_shown(url)} to resume")
        if name + COMPANION not in names:
            raise StudyError(
                f"study '{name}' in {_shown(url)} was not made by this iotuner (it has no "
                f"{name + COMPANION}): start a new study"
            )
        try:
            study = optuna.load_study(storage=st, study_name=name)
            companion = st.get_study_id_from_name(name + COMPANION)
            config = study.user_attrs.get(CONFIG_KEY)
        except Exception as e:
            raise StudyError(f"cannot read study '{name}' in {_shown(url)}: {db_error(e)}") from None
        return cls(st, study, companion), config

    def read(self, open_ids: set[int], attrs: bool = True) -> tuple[list[Row], dict | None]:
        """Trials new since the last read, and those of open_ids (not finished when last read); and the
        companion's attributes (budget, sessions, leases) unless attrs is False."""
        rows, study = self.backend.read(self.studies, self._after, open_ids, self.companion_id if attrs else None)
        for r in rows:
            if r.id > self._after.get(r.study, -1):
                self._after[r.study] = r.id
        return rows, study

    def attrs(self) -> dict[str, Any]:
        """The companion's attributes: budget, sessions, leases."""
        return self.backend.study_attrs(self.companion_id)

    def sampling_study(self, sampler: optuna.samplers.BaseSampler) -> optuna.Study:
        """The study as a sampler sees it, with every trial as of now: a new study object each time (as Optuna's
        own ask empties its study's cache of trials once a trial), over one cached storage."""
        return optuna.load_study(study_name=self.name, storage=self._sampled, sampler=sampler)

    def trial_system_attrs(self, tid: int) -> dict[str, Any]:
        """What a sampler wrote on a trial as it began (a grid's cell)."""
        return self._sampled.get_trial_system_attrs(tid)


def _shown(url) -> str:
    return mask(url) if isinstance(url, str) else type(url).__name__
