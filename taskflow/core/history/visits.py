"""A run's state visits from its timeline, literal or effective, and its state at an instant.

Pure. The timeline records every state a run entered (``state.entered``, details
``state``, ``via``) and, for an undo or a redo, the line it reverses
(``details.reverses``: the id of the ``state.entered`` line it rewinds). Two readings:

- **literal**: what happened. Every entry opens a visit that closes at the next entry
  (or when the run is cancelled); a visit later rewound is marked ``undone_by``; the
  undo's own re-entry is a visit like any other (``via`` "undo").
- **effective**: what stands after undos. A rewound visit never happened: the visit
  before it goes on as if it had never been left, and the undo's re-entry adds nothing.
  A redo (the undo of an undo) restores the rewound visit as it first stood.

The store keeps the effective visits of every run as rows (``store/history``, filled by a
trigger on the timeline with the same rules), so ``runs(filter: {stateAt})`` and
``stateCounts`` are index reads; ``tests/integration/test_state_spans.py`` checks the
trigger's rows equal :func:`visits` here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

#: The timeline kinds a history reads.
ENTERED = "state.entered"
CANCELLED = "run.cancelled"
KINDS = (ENTERED, CANCELLED)


@dataclass(frozen=True)
class Line:
    """A timeline line that changes where a run is (an entry or its cancellation)."""

    id: int
    kind: str
    at: datetime
    actor: str | None
    details: Mapping[str, Any]

    @property
    def reverses(self) -> int | None:
        """The entry an undo (or redo) rewinds; None for any other line."""
        found = self.details.get("reverses")
        return int(found) if found is not None else None


@dataclass(frozen=True)
class Visit:
    """A stay in one state: from ``entered_at`` to ``left_at`` (None: it still stands)."""

    state: str
    entered_at: datetime
    left_at: datetime | None
    #: The timeline line that entered it, how (start, route, move, timer, goto, undo...) and who.
    line: int
    via: str
    actor: str | None
    #: Literal reading only: the line of the undo that later rewound this visit.
    undone_by: int | None = None

    def covers(self, at: datetime) -> bool:
        """The run was here at ``at`` (entered at or before it, not left by then)."""
        return self.entered_at <= at and (self.left_at is None or at < self.left_at)


def visits(lines: Iterable[Line], *, effective: bool) -> list[Visit]:
    """The run's visits in the order they were entered (see the module's two readings)."""
    ordered = sorted((ln for ln in lines if ln.kind in KINDS), key=lambda ln: ln.id)
    found: list[Visit] = []
    for line in ordered:
        if line.kind == CANCELLED:
            _close(found, line.at)
        elif line.reverses is None or not effective:
            _close(found, line.at)
            found.append(_visit(line))
            if line.reverses is not None:
                _mark_undone(found, line)
        else:
            _rewind(found, line)
    return found


def _visit(line: Line) -> Visit:
    return Visit(
        state=str(line.details.get("state", "")),
        entered_at=line.at,
        left_at=None,
        line=line.id,
        via=str(line.details.get("via", "")),
        actor=line.actor,
    )


def _close(found: list[Visit], at: datetime) -> None:
    for i, v in enumerate(found):
        if v.left_at is None and v.undone_by is None:
            found[i] = dataclasses.replace(v, left_at=at)


def _mark_undone(found: list[Visit], undo: Line) -> None:
    """Literal: the rewound visit (or, for a redo, the undo's re-entry) is marked."""
    for i, v in enumerate(found):
        if v.line == undo.reverses:
            found[i] = dataclasses.replace(v, undone_by=undo.id)


def _rewind(found: list[Visit], undo: Line) -> None:
    """Effective: an undo hides the visit it rewinds and reopens the one before; a redo
    (its ``reverses`` is an undo's line) closes that one again and shows the visit back."""
    target = next((i for i, v in enumerate(found) if v.line == undo.reverses), None)
    if target is not None:
        hidden = found[target]
        found[target] = dataclasses.replace(hidden, undone_by=undo.id)
        before = _standing_before(found, hidden.entered_at)
        if before is not None:
            found[before] = dataclasses.replace(found[before], left_at=None)
        return
    restored = next((i for i, v in enumerate(found) if v.undone_by == undo.reverses), None)
    if restored is not None:
        _close(found, found[restored].entered_at)
        found[restored] = dataclasses.replace(found[restored], undone_by=None)


def _standing_before(found: Sequence[Visit], entered_at: datetime) -> int | None:
    """The effective visit a rewound one closed (it left when that one entered)."""
    for i in range(len(found) - 1, -1, -1):
        v = found[i]
        if v.undone_by is None and v.left_at == entered_at:
            return i
    return None


def standing(found: Iterable[Visit]) -> list[Visit]:
    """The visits an effective reading shows (rewound ones left out)."""
    return [v for v in found if v.undone_by is None]


def state_at(lines: Iterable[Line], at: datetime, *, effective: bool) -> Visit | None:
    """The visit the run was in at ``at``; None before it started or after it was cancelled
    (literal: the latest entry at or before ``at`` wins, rewound or not)."""
    found = visits(lines, effective=effective)
    shown = standing(found) if effective else found
    covering = [v for v in shown if v.covers(at)]
    return covering[-1] if covering else None
