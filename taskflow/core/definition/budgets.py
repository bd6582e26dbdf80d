"""Durations that say which clock they run on: ``business.hours(4)``, ``real.days(30)``.

Business time accrues only inside the working windows of a calendar (the
budget's own, else the milestone's, else the workflow's). Real time is the
wall clock, every second counting.

**What ``business.days(n)`` means.** ``n`` times the calendar's *working-day
length*: the length of its most common working day in its weekly pattern
(``uk-london``, 09:00-17:30, has 8 h 30; ``24x7`` has 24 h). So
``business.days(2)`` on ``uk-london`` is 17 business hours, and a slot opened
Tuesday 15:00 is due Thursday 15:00, whatever holidays lie between. We chose a
duration over "the same local time N working days later" because a clock is a
ledger of elapsed business seconds: pauses, recomputes and "remaining" all
subtract durations, and a duration composes with them where a calendar-day
count does not (half days would shift the due instant depending on when a
pause happened). The SLA code, which holds the calendar, derives the day
length from it and asks :meth:`ResolvedBudget.business_time` for the duration;
this module never reads a calendar.

A budget may depend on the subject: ``budget_by(subject.priority, {"P1":
real.hours(1), "P2": business.hours(4)}, default=business.days(2))``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final, Literal

from taskflow.core.definition.checks import problems
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd

Kind = Literal["business", "real"]
Unit = Literal["minutes", "hours", "days"]

#: What a milestone's clock does when its budget changes mid-run (docs/sla.md).
KEEP_ELAPSED, RESTART, RETROACTIVE = "keep-elapsed", "restart", "retroactive"
RECOMPUTE_POLICIES: Final = (KEEP_ELAPSED, RESTART, RETROACTIVE)

#: A working day's length when no calendar is at hand (load-time comparisons only).
DEFAULT_DAY_LENGTH: Final = timedelta(hours=8)

_UNIT_SECONDS: Final = {"minutes": 60, "hours": 3600, "days": 86400}


@dataclass(frozen=True)
class Budget:
    """``amount`` ``unit`` of ``kind`` time, on ``calendar`` (None: inherit it)."""

    kind: Kind
    amount: float
    unit: Unit
    calendar: str | None = None

    def describe(self) -> str:
        """``4 business hours``, ``1 real hour``, ``2 business days on de-berlin``."""
        amount = int(self.amount) if float(self.amount).is_integer() else self.amount
        unit = self.unit[:-1] if amount == 1 else self.unit
        text = f"{amount} {self.kind} {unit}"
        return f"{text} on {self.calendar}" if self.calendar else text

    def __str__(self) -> str:
        return self.describe()

    def to_json(self) -> Any:
        """``{"kind": "business", "amount": 4, "unit": "hours", "calendar": null}``."""
        return {
            "kind": self.kind,
            "amount": self.amount,
            "unit": self.unit,
            "calendar": self.calendar,
        }


@dataclass(frozen=True, eq=False)
class BudgetTable:
    """A budget chosen by a subject value: ``budget_by(subject.priority, {...}, default=...)``."""

    key: ex.Expr
    table: tuple[tuple[str, Budget], ...]
    default: Budget | None = None

    def budgets(self) -> tuple[Budget, ...]:
        """Every budget the table can yield."""
        return tuple(b for _, b in self.table) + ((self.default,) if self.default else ())

    def describe(self) -> str:
        """``by subject.priority (P1: 1 real hour, ..., otherwise 2 business days)``."""
        parts = [f"{k}: {b}" for k, b in self.table]
        if self.default:
            parts.append(f"otherwise {self.default}")
        return f"by {ex.describe(self.key)} (" + ", ".join(parts) + ")"

    def __str__(self) -> str:
        return self.describe()

    def to_json(self) -> Any:
        """``{"by": <expr>, "table": {"P1": <budget>...}, "default": <budget>|null}``."""
        return {
            "by": exd.to_json(self.key),
            "table": {k: b.to_json() for k, b in self.table},
            "default": self.default.to_json() if self.default else None,
        }


BudgetLike = Budget | BudgetTable


class _Clock:
    """The ``business`` and ``real`` namespaces of the DSL."""

    def __init__(self, kind: Kind) -> None:
        self.kind: Kind = kind

    def minutes(self, amount: float, *, calendar: str | None = None) -> Budget:
        """``amount`` minutes of this kind of time."""
        return Budget(self.kind, amount, "minutes", self._calendar(calendar))

    def hours(self, amount: float, *, calendar: str | None = None) -> Budget:
        """``amount`` hours of this kind of time."""
        return Budget(self.kind, amount, "hours", self._calendar(calendar))

    def days(self, amount: float, *, calendar: str | None = None) -> Budget:
        """Real days are 24 hours; business days are working days (see the module docs)."""
        return Budget(self.kind, amount, "days", self._calendar(calendar))

    def _calendar(self, calendar: str | None) -> str | None:
        if calendar is not None and self.kind == "real":
            raise problems.CalendarOnRealTime(
                "real time runs on no calendar",
                fix="drop calendar= or use business.* for time on a calendar",
            )
        return calendar


business: Final = _Clock("business")
real: Final = _Clock("real")


def budget_by(
    key: ex.Expr, table: Mapping[str, Budget], *, default: Budget | None = None
) -> BudgetTable:
    """A budget looked up by the subject value at ``key`` (compared as text)."""
    return BudgetTable(key=key, table=tuple((str(k), b) for k, b in table.items()), default=default)


@dataclass(frozen=True)
class ResolvedBudget:
    """A budget for one slot: ``kind``, a fixed ``duration`` plus ``working_days``, a ``calendar``.

    Real budgets have ``working_days == 0`` and ``calendar is None``. Business
    budgets always name their calendar. The business duration is
    ``duration + working_days x day_length`` (see :meth:`business_time`).
    """

    kind: Kind
    duration: timedelta
    calendar: str | None
    working_days: float = 0.0

    def business_time(self, day_length: timedelta = DEFAULT_DAY_LENGTH) -> timedelta:
        """The whole budget as a duration, given the calendar's working-day length."""
        return self.duration + day_length * self.working_days

    def describe(self) -> str:
        """``16:00:00 business on uk-london`` style text for logs and the timeline."""
        text = f"{self.working_days:g} working days" if self.working_days else str(self.duration)
        if self.kind == "real":
            return f"{text} real time"
        return f"{text} business time on {self.calendar}"


def _lookup(budget: BudgetLike, subject: Mapping[str, Any]) -> Budget | None:
    if isinstance(budget, Budget):
        return budget
    value = ex.value_of(budget.key, ex.Env(subject=subject))
    if value is not ex.MISSING and value is not None:
        text = str(value).lower() if isinstance(value, bool) else str(value)
        for key, candidate in budget.table:
            if key == text:
                return candidate
    return budget.default


def resolve_budget(
    budget: BudgetLike, subject: Mapping[str, Any], calendar: str | None = None
) -> ResolvedBudget | None:
    """The budget that applies to ``subject``; None when a table has no entry and no default.

    ``calendar`` is the inherited calendar (the milestone's, else the
    workflow's) used when a business budget names none.
    """
    chosen = _lookup(budget, subject)
    if chosen is None:
        return None
    if chosen.kind == "real":
        return ResolvedBudget(
            "real", timedelta(seconds=chosen.amount * _UNIT_SECONDS[chosen.unit]), None
        )
    cal = chosen.calendar or calendar
    if chosen.unit == "days":
        return ResolvedBudget("business", timedelta(0), cal, working_days=chosen.amount)
    return ResolvedBudget(
        "business", timedelta(seconds=chosen.amount * _UNIT_SECONDS[chosen.unit]), cal
    )


def to_json(budget: BudgetLike) -> Any:
    """The JSON form of a budget or a budget table."""
    return budget.to_json()
