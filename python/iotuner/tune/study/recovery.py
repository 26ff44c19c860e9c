"""Trials whose worker died: found by their heartbeat (or their process, on this host), failed, and queued to
run again: the `Workers` view's recovery part.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ..launch import slurm
from .leases import alive
from .records import Record, Row
from .state import StoreState

MAX_STARTS = 3  # a search trial whose worker dies is run again, up to this many starts in all


class Recovery(StoreState):
    """Mixed into `coordination.Workers`, which provides db, session, derived, heartbeat_s, refresh and _apply."""

    _checked_stale = 0.0
    given_up: frozenset = frozenset()  # of the trials the last recover() failed, those not run again (MAX_STARTS)

    def requeue(self, r: Record, reason: str | None = None) -> bool:
        """A search trial that did not finish through no fault of its settings (its worker died, the
        scheduler ended its job) queued to run again, under a new number: up to MAX_STARTS starts in all."""
        starts = int(r.attrs.get("starts", 1))
        if starts >= MAX_STARTS or not r.settings:
            return False
        attrs = {"settings": dict(r.settings), "retry_of": r.number, "starts": starts + 1}
        why = reason or death_reason(r.attrs.get("owner") or {})
        if why:
            attrs["retry_reason"] = why
        tid, number = self.db.backend.create(self.db.study_id, "WAITING", attrs, params=self.db.backend.params(r.id))
        self._apply(Row(tid, number, "WAITING", attrs, True, self.db.study_id))
        return True

    def recover(self) -> list[int]:
        """Running trials whose worker is gone: failed, and queued to run again (once per failure, by the one
        worker whose update failed it). A worker on this host that no longer exists is recognized at once;
        any other when its heartbeat is three heartbeats old (checked once per heartbeat). A live peer's
        running trial is never touched. Returns the numbers of the trials failed."""
        self.refresh()
        others = [r for r in self.derived.running() if r.session != self.session.id]
        dead = [
            r
            for r in others
            if alive((r.attrs.get("owner") or {}).get("host", ""), int((r.attrs.get("owner") or {}).get("pid") or 0))
            is False
        ]
        interval = self.heartbeat_s or 10
        if time.time() - self._checked_stale >= interval:
            self._checked_stale = time.time()
            stale = set(self.db.backend.stale([r.id for r in others if r not in dead], 3 * interval))
            dead += [r for r in others if r.id in stale]
        numbers, given_up = [], set()
        for r in dead:
            if self.db.backend.finish(r.id, "FAIL", {}):
                failed = self._apply(Row(r.id, r.number, "FAIL", dict(r.attrs), True, self.db.study_id))
                if not self.requeue(failed):
                    given_up.add(r.number)
                numbers.append(r.number)
        self.given_up = frozenset(given_up)
        return numbers


def death_reason(owner: Mapping[str, Any]) -> str | None:
    """Why a worker stopped, when a batch scheduler can tell (its Slurm job ended)."""
    job = owner.get("slurm_job")
    if not job:
        return None
    try:
        state, _ = slurm.ended(owner.get("slurm_job_id", job), wait_s=10)
    except Exception:
        return None
    return f"its worker's {slurm.describe_end(job, state)}"
