"""Which state changes a person may take back: the ``undoable`` policy of a move or a state.

A :class:`~taskflow.core.definition.model.Move` marked ``undoable`` may be undone after it
moved the run; a :class:`~taskflow.core.definition.model.State` marked ``undoable`` lets the
completion that routed the run out of it be undone (docs/history.md, "Undo").
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from datetime import timedelta
from typing import Any

from taskflow.core.definition import audience as au


@dataclass(frozen=True)
class Undoable:
    """May be undone: within ``within`` of the change (None: as long as it stands), by the
    person who made it when ``same_actor``, and only by ``by`` (None: anyone who may read
    the run and act on it)."""

    _: KW_ONLY
    within: timedelta | None = None
    same_actor: bool = False
    by: au.Who | None = None

    def __post_init__(self) -> None:
        if self.within is not None and self.within <= timedelta(0):
            raise ValueError(f"undoable within must be positive, not {self.within}")

    def to_json(self) -> Any:
        """``{"within_s", "same_actor", "by"}``."""
        return {
            "within_s": self.within.total_seconds() if self.within is not None else None,
            "same_actor": self.same_actor,
            "by": au.to_json(self.by) if self.by is not None else None,
        }
