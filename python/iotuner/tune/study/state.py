"""What the parts of `Store` (sessions, recovery, exclusive sections) share: the store's state and the two methods
they call back, declared once, so each part is checked against them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .derive import Derived, Session
    from .leases import Leases
    from .records import Record, Row
    from .storage import StudyStorage


class StoreState:
    db: StudyStorage
    session: Session
    now: Callable[[], float]  # wall-clock time
    heartbeat_s: int | None
    derived: Derived
    leases: Leases
    _attrs: dict[str, Any]  # the companion's attributes, as last read

    def refresh(self, attrs: bool = True) -> None:
        raise NotImplementedError

    def _apply(self, row: Row) -> Record:
        raise NotImplementedError

    def recover(self) -> list[int]:
        raise NotImplementedError
