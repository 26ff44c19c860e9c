"""A worker's sessions on a study, and the tuning clock they make: the `Workers` view's sessions part.

A session is a worker's stretch of tuning time: its host, process, start and
last sign of life, an attribute of the study's companion that only its worker
writes. Tuning time is the union of every session's span (`derive.clock_at`).
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from .derive import Session, clock_at
from .leases import alive
from .state import StoreState
from .storage import SESSION_PREFIX


class Sessions(StoreState):
    """Mixed into `coordination.Workers`, which provides db, session, now, heartbeat_s, derived and _attrs."""

    def begin_session(self, scratch: str | None = None) -> None:
        """This worker's stretch of tuning starts (a new one if it had one: a span is never rewritten)."""
        known = any(s.id == self.session.id for s in self.sessions())
        self.session = Session(
            uuid.uuid4().hex[:12] if known else self.session.id,
            self.session.host,
            self.session.pid,
            self.now(),
            self.now(),
            scratch,
        )
        self.touch_session()

    def touch_session(self) -> None:
        self.db.backend.set_study_attr(*self.touched())

    def touched(self) -> tuple[int, str, dict]:
        """This worker's session with its last sign of life now, as the attribute to write (alone, or in the
        transaction of a record it writes)."""
        self.session = replace(self.session, last=self.now())
        s = self.session
        value = {"host": s.host, "pid": s.pid, "start": s.start, "last": s.last, "scratch": s.scratch}
        self._attrs[SESSION_PREFIX + s.id] = value
        return self.db.companion_id, SESSION_PREFIX + s.id, value

    def sessions(self) -> list[Session]:
        """Every worker's sessions, as of the last refresh (this worker's own is always current)."""
        out = []
        for key, v in self._attrs.items():
            if key.startswith(SESSION_PREFIX) and isinstance(v, dict):
                sid = key[len(SESSION_PREFIX) :]
                out.append(
                    self.session
                    if sid == self.session.id
                    else Session(
                        sid,
                        v.get("host", ""),
                        int(v.get("pid", 0)),
                        float(v.get("start", 0)),
                        float(v.get("last", 0)),
                        v.get("scratch"),
                    )
                )
        return out

    def dead_sessions_here(self) -> list[Session]:
        """Sessions of this host whose process is gone (a killed tuner): their scratch can go."""
        return [s for s in self.sessions() if s.id != self.session.id and alive(s.host, s.pid) is False]

    def worker_seed(self, seed: int) -> int:
        """The study's seed for its first worker; a derived one for every later or concurrent worker, so a
        resumed or joining worker's strategy does not propose the same points again."""
        if not any(s.id != self.session.id for s in self.sessions()):
            return seed
        return (seed * 1_000_003 + int(self.session.id, 16)) % (2**31)

    def live_peers(self) -> list[Session]:
        """Other sessions that may still be working: alive on this host, or seen lately elsewhere."""
        grace = 3 * (self.heartbeat_s or 10)
        out = []
        for s in self.sessions():
            if s.id == self.session.id:
                continue
            here = alive(s.host, s.pid)
            if here or (here is None and self.now() - s.last < grace):
                out.append(s)
        return out

    def clock(self, at: float | None = None) -> float:
        """Tuning time, in seconds: how long at least one worker was working on the study, up to wall time
        `at` (default now). Sessions overlap when workers run side by side; a session's end is its last sign
        of life, or now for this worker's own."""
        return clock_at([self.now() if at is None else at], self.sessions(), self.session.id)[0]

    def tuning_time(self) -> float:
        """The study's tuning time so far: up to the end of its last run (waiting afterwards is not tuning)."""
        last = self.derived.last_end
        return self.clock(last) if last is not None else 0.0
