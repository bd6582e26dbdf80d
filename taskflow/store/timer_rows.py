"""Timer rows as Python sees them, and how a decision's wanted timers reconcile with them.

Kept apart from ``deadlines.py`` (which writes them) so both stay small; that
module re-exports these names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.core import deadlines, timer_states

ARMED = timer_states.TimerStatus.ARMED


@dataclass(frozen=True)
class TimerRow:
    """A timer row: a reminder, breach or timeout of a run, by its stable key."""

    id: int
    key: str
    run_id: str
    slot_id: str | None
    kind: str
    ref: str
    due_at: datetime
    status: str
    fired: int
    #: Failed firings since it last fired or was (re-)armed (see ``core/timer_states.py``).
    attempts: int = 0
    #: The last failure, ``Class: message`` (short).
    last_error: str | None = None
    failed_at: datetime | None = None
    #: The due instant its definition planned, while a failure pushed ``due_at`` back.
    planned_at: datetime | None = None

    @property
    def planned(self) -> datetime:
        """The due instant its definition planned (``due_at`` unless a failure moved it)."""
        return self.planned_at if self.planned_at is not None else self.due_at


def timer_from(row: Any, prefix: str = "") -> TimerRow:
    """A timer row read with :func:`timer_columns` (the same ``prefix``)."""

    def get(name: str) -> Any:
        return row[prefix + name]

    return TimerRow(
        id=get("id"),
        key=get("key"),
        run_id=str(get("run")),
        slot_id=str(get("slot")) if get("slot") else None,
        kind=get("kind"),
        ref=get("part"),
        due_at=get("due_at"),
        status=get("status"),
        fired=get("fired"),
        attempts=get("attempts"),
        last_error=get("last_error"),
        failed_at=get("failed_at"),
        planned_at=get("planned_at"),
    )


_TIMER_FIELDS = (
    "id", "key", "run", "slot", "kind", "part", "due_at", "status", "fired",
    "attempts", "last_error", "failed_at", "planned_at",
)  # fmt: skip
TIMER_COLUMNS = ", ".join(_TIMER_FIELDS)


def timer_columns(prefix: str) -> str:
    """The timer's columns from ``t``, renamed with ``prefix`` (beside other tables' columns)."""
    return ", ".join(f"t.{c} AS {prefix}{c}" for c in _TIMER_FIELDS)


def differences(
    existing: Sequence[TimerRow], wanted: Sequence[deadlines.TimerSpec]
) -> tuple[list[TimerRow], list[deadlines.TimerSpec]]:
    """(armed rows to cancel, specs to arm or move) so that the rows match ``wanted``.

    A dead or discarded row is left alone (only an admin's retry re-arms it), and an
    armed row whose failed firing was pushed back keeps its backoff while its planned
    due instant is still the one wanted.
    """
    by_key = {t.key: t for t in existing}
    want = {s.key for s in wanted}
    cancel = [t for t in existing if t.status == ARMED and t.key not in want]
    arm = [
        s
        for s in wanted
        if s.key not in by_key
        or (
            by_key[s.key].status not in timer_states.PARKED
            and (by_key[s.key].status != ARMED or by_key[s.key].planned != s.due_at)
        )
    ]
    return cancel, arm
