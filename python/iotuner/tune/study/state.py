"""What the parts of the `Workers` view (sessions, recovery, exclusive sections) share: its state and the methods
they call back, declared once, so each part is checked against them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .derive import Derived, Session
    from .leases import Leases
    from .records import Record, Row
    from .storage import StudyStorage


class StoreState:
    db: StudyStorage
    session: Session
    heartbeat_s: int | None
    derived: Derived
    leases: Leases
    _attrs: dict[str, Any]  # the companion's attributes, as last read

    def now(self) -> float:  # wall-clock time
        raise NotImplementedError

    def refresh(self, attrs: bool = True) -> None:
        raise NotImplementedError

    def _apply(self, row: Row) -> Record:
        raise NotImplementedError

    def recover(self) -> list[int]:
        raise NotImplementedError
