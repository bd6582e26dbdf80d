"""Timer rows read from PostgreSQL (the row type is ``core/clocks/timer_states.TimerRow``; a
decision's wanted timers reconcile with them in ``core/common/unit_of_work.py``).

``deadlines.py`` re-exports these names.
"""

from __future__ import annotations

from typing import Any

from taskflow.core.clocks import timer_states

ARMED = timer_states.TimerStatus.ARMED


TimerRow = timer_states.TimerRow


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
