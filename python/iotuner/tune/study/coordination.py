"""The workers of a study, as one worker sees them: its session and the others' (the tuning clock), the
exclusive sections they take turns at (leases), the trials of a worker that died (recovery), and the
trials the others run now. The view the tuner's search and confirmation use to work beside other workers;
readers of the results never need it (but for the clock). Its parts are one concern each: `sessions`,
`leases` (sections), `recovery`."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .derive import Session
from .leases import Leases, Sections
from .records import Record, Row, canonical
from .recovery import Recovery
from .sessions import Sessions

if TYPE_CHECKING:
    from ..store import Store


class Workers(Sessions, Recovery, Sections):
    """This worker (its session, heartbeat) among the study's workers. The records and the study's attributes
    are the store's: it refreshes them and derives what a worker writes."""

    def __init__(self, store: Store, heartbeat_s: int | None):
        self.store, self.db, self.derived, self.heartbeat_s = store, store.db, store.derived, heartbeat_s
        self._attrs = store.attrs  # the study's attributes as last read: the store refreshes them in place
        self.session = Session(uuid.uuid4().hex[:12], socket.gethostname(), os.getpid(), self.now(), self.now())
        self.leases = Leases(self.db.backend, self.db.companion_id, lambda: self.session, store.read_attrs, heartbeat_s)

    def now(self) -> float:
        return self.store.now()

    def refresh(self, attrs: bool = True) -> None:
        self.store.refresh(attrs)

    def _apply(self, row: Row) -> Record:
        return self.store.written(row)

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
