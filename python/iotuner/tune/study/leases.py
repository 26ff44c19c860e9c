"""Leases and heartbeats: work that one worker of a study does while the others wait, and signs of life.

A lease is an attribute of the study's companion, `lease:NAME` (the confirmation
round `confirmation-0`, a strategy's training `training:model`), taken
atomically in the storage: the first worker to insert it holds it (the storage's
unique key refuses the others), and every later change is conditional on the
value its writer last saw. The holder's thread renews it every heartbeat; one
that stops (its process died: at once on the same host, elsewhere after three
missed heartbeats) is taken over by exactly one of the waiting workers, which
starts the work again (`attempt` counts the starts). When the work is done the
holder marks the lease done with what the others need (the verdict's plan).

A running trial's heartbeat is Optuna's: a row of its heartbeat table, renewed
by a thread of the worker that runs the trial.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from .state import StoreState
from .storage import LEASE_PREFIX

HELD, DONE, DROPPED = "held", "done", "dropped"


class LeaseLost(RuntimeError):
    """Another worker took this worker's lease over (its heartbeats had stopped reaching the storage)."""


def alive(host: str, pid: int) -> bool | None:
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


@dataclass(frozen=True)
class Lease:
    name: str
    holder: str  # the holding session
    host: str
    pid: int
    attempt: int  # 1 for the first start, 2 after a takeover, ...
    state: str  # held, done, dropped (its holder gave up: the next worker takes it at once)
    beat: float  # the holder's last heartbeat (its wall clock)
    grace: float  # how old a heartbeat may get before the lease is taken over
    content: dict = field(default_factory=dict)
    raw: Any = None  # the stored value, for the conditional updates

    def to_json(self) -> dict:
        return {
            "holder": self.holder,
            "host": self.host,
            "pid": self.pid,
            "attempt": self.attempt,
            "state": self.state,
            "beat": self.beat,
            "grace": self.grace,
            "content": self.content,
        }

    @classmethod
    def parse(cls, name: str, value: Any) -> Lease | None:
        if not isinstance(value, dict):
            return None
        try:
            return cls(
                name,
                str(value["holder"]),
                str(value["host"]),
                int(value["pid"]),
                int(value["attempt"]),
                str(value["state"]),
                float(value["beat"]),
                float(value["grace"]),
                dict(value.get("content") or {}),
                value,
            )
        except (KeyError, TypeError, ValueError):
            return None

    def stale(self, now: float) -> bool:
        """Its holder is gone: dead on this host, silent for longer than the grace elsewhere, or it gave up."""
        if self.state == DROPPED:
            return True
        if self.state != HELD:
            return False
        if alive(self.host, self.pid) is False:
            return True
        return now - self.beat > self.grace


def leases_in(attrs: Mapping[str, Any]) -> dict[str, Lease]:
    out = {}
    for key, value in attrs.items():
        if key.startswith(LEASE_PREFIX):
            lease = Lease.parse(key[len(LEASE_PREFIX) :], value)
            if lease is not None:
                out[lease.name] = lease
    return out


class Beat:
    """A thread that calls `renew` every interval seconds until stopped; `failed` once renew returns False."""

    def __init__(self, renew: Callable[[], bool], interval: float | None):
        self._renew, self._interval = renew, interval
        self._stop = threading.Event()
        self.failed = False
        self._thread = None
        if interval:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                if not self._renew():
                    self.failed = True
                    return
            except Exception:  # a passing database error: the next beat tries again
                pass

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()


class Leases:
    """The leases of one study, for one worker (its session)."""

    def __init__(
        self,
        backend,
        companion_id: int,
        session: Callable[[], Any],
        read: Callable[[], Mapping[str, Any]],
        interval_s: float | None,
    ):
        self.backend, self.companion_id = backend, companion_id
        self._session, self._read = session, read
        self.interval_s = interval_s or 10
        self.grace_s = 3 * self.interval_s

    def all(self) -> dict[str, Lease]:
        return leases_in(self._read())

    def get(self, name: str) -> Lease | None:
        return self.all().get(name)

    def _swap(self, old: Lease | None, new: Lease) -> Lease | None:
        value = new.to_json()
        if self.backend.swap_study_attr(
            self.companion_id, LEASE_PREFIX + new.name, None if old is None else old.raw, value
        ):
            return replace(new, raw=value)
        return None

    def _mine(self, name: str, attempt: int, content: Mapping[str, Any]) -> Lease:
        s = self._session()
        return Lease(name, s.id, s.host, s.pid, attempt, HELD, time.time(), self.grace_s, dict(content))

    def take(self, name: str, content: Mapping[str, Any], over: Lease | None = None) -> Lease | None:
        """The lease, if this worker is the one that gets it: the first, or the one that takes over `over`
        (a lease whose holder is gone)."""
        return self._swap(over, self._mine(name, over.attempt + 1 if over else 1, content))

    def update(
        self, lease: Lease, content: Mapping[str, Any] | None = None, state: str | None = None, beat: bool = True
    ) -> Lease:
        """The lease renewed (and its content or state changed); LeaseLost when another worker took it."""
        new = replace(
            lease,
            content=dict(content if content is not None else lease.content),
            state=state or lease.state,
            beat=time.time() if beat else lease.beat,
        )
        got = self._swap(lease, new)
        if got is None:
            raise LeaseLost(
                f"another worker took over {lease.name} (this worker's heartbeats stopped reaching the study storage)"
            )
        return got

    @contextlib.contextmanager
    def holding(self, lease: Lease) -> Iterator[Held]:
        """Renews the lease while the caller works; the Held handle has the latest lease."""
        held = Held(self, lease)
        beat = Beat(held.renew, self.interval_s)
        held.beating = beat
        try:
            yield held
        except BaseException:
            beat.stop()
            with contextlib.suppress(Exception, LeaseLost):
                held.set(state=DROPPED)  # the next worker takes it at once
            raise
        finally:
            beat.stop()


class Held:
    """A lease this worker holds: renewed by a thread, changed by the work (content, done)."""

    def __init__(self, leases: Leases, lease: Lease):
        self.leases, self.lease = leases, lease
        self._lock = threading.Lock()
        self.beating: Beat | None = None

    def renew(self) -> bool:
        try:
            self.set()
        except LeaseLost:
            return False
        return True

    def set(self, content: Mapping[str, Any] | None = None, state: str | None = None) -> Lease:
        with self._lock:
            self.lease = self.leases.update(self.lease, content, state)
            return self.lease

    def check(self) -> None:
        """LeaseLost when the heartbeat thread found the lease taken over."""
        if self.beating is not None and self.beating.failed:
            raise LeaseLost(
                f"another worker took over {self.lease.name} (this worker's heartbeats stopped "
                f"reaching the study storage)"
            )


@dataclass
class Section:
    """An exclusive section as this worker sees it: whether it runs it (holding the lease), and the lease."""

    mine: bool
    lease: Lease
    held: Held | None = None

    @property
    def restarted(self) -> bool:
        return self.mine and self.lease.attempt > 1


class Sections(StoreState):
    """Exclusive sections, mixed into `coordination.Workers`, which provides leases, session, _attrs, recover and
    refresh."""

    @contextlib.contextmanager
    def exclusive(self, name: str, content: Mapping[str, Any] | None = None, poll_s: float = 1.0) -> Iterator[Section]:
        """One worker at a time runs the section `name`: it yields Section(mine=True) to the worker that holds
        its lease (the first to ask, or the one that took it over from a holder that died: `restarted`), and
        Section(mine=False) once the section is done, to the others, who wait for it meanwhile."""
        while True:
            lease = self.leases.get(name)
            if lease is not None and lease.state == DONE:
                yield Section(False, lease)
                return
            got = None
            if lease is None or lease.stale(time.time()):
                got = self.leases.take(name, content or {}, over=lease)
            if got is not None:
                break
            self.recover()
            time.sleep(poll_s)
        with self.leases.holding(got) as held:
            yield Section(True, got, held)
            held.set(state=DONE)
        self.refresh()

    def lease(self, name: str) -> Lease | None:
        return self.leases.get(name)

    def held_by_others(self, prefix: str) -> Lease | None:
        """A lease (named prefix...) another live worker holds now, from the last refresh."""
        for lease in leases_in(self._attrs).values():
            if (
                lease.name.startswith(prefix)
                and lease.state == HELD
                and lease.holder != self.session.id
                and not lease.stale(time.time())
            ):
                return lease
        return None

    def leases_named(self, prefix: str) -> dict[str, Lease]:
        """The study's leases whose names start with prefix (the confirmation rounds: `confirmation-`)."""
        return {name: lease for name, lease in self.leases.all().items() if name.startswith(prefix)}

    def mark_written(self, lease: Lease, out: str) -> None:
        """The results of a done section (the confirmation round) were written to out: a later resume leaves
        them, and the other workers say where they are."""
        self.leases.update(lease, {**lease.content, "written": out}, beat=False)
