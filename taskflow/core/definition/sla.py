"""Deadlines declared on slots and states: milestones, reminders, their actions, timeouts, priority.

- A **milestone** puts a budget on a slot: ``assigned`` (picked up: open -> claimed)
  or ``finished`` (open -> satisfied) within a budget.
- A **reminder** is scheduled off one of the slot's milestones: first at an
  offset after the slot opened (``reminder.after(business.hours(2), ...)``) or at
  a fraction of the milestone's budget (``reminder.at(0.75, ...)``; 1.0 is the
  breach: ``reminder.on_breach(...)``), then ``every`` interval, until the
  milestone is met, ``times`` firings, or the ``until`` bound (an offset or a
  fraction). It notifies, escalates (adds candidates), reassigns, raises the
  priority and/or moves the run.
- A **timeout** fires once after a duration in a state: notify and/or move.
- **Priority**: 1 is the most urgent. Fixed, or read from the subject.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final, Literal, TypedDict, Unpack

from taskflow.core.definition import audience as au
from taskflow.core.definition import budgets as bu
from taskflow.core.definition import steps
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd

# The milestone vocabulary lives in its own module; these names are the DSL's.
from taskflow.core.definition.milestones import MILESTONE_KINDS as MILESTONE_KINDS
from taskflow.core.definition.milestones import Milestone as Milestone
from taskflow.core.definition.milestones import MilestoneKind as MilestoneKind
from taskflow.core.definition.milestones import milestone as milestone

ActionKind = Literal[
    "notify", "escalate", "reassign", "raise_priority", "move", "cancel", "raise_event"
]


@dataclass(frozen=True, eq=False)
class Action:
    """What a reminder or timeout does.

    ``notify`` and ``escalate`` (add to the candidates) and ``reassign`` carry
    ``who``; ``raise_priority`` carries ``priority`` (the new, more urgent
    value); ``move`` carries ``target`` (a state). A ``notify`` with
    ``with_link`` asks, for each outsider it reaches (an e-mail address
    without an account), that the sender mint a magic link for the slot
    (see docs/magic-links.md, "Reminders that carry a link").
    """

    kind: str
    who: au.Who | None = None
    priority: int | None = None
    target: str | None = None
    with_link: bool = False
    #: ``run``: the action a timeout runs, a path or a function (the run stays where it is).
    step: steps.ActionLike | None = None

    def describe(self) -> str:
        """``notify holder``, ``escalate to role:finance-lead``, ``move to expired``."""
        if self.kind == "notify":
            return f"notify {self.who}" + (" with a link" if self.with_link else "")
        if self.kind in ("escalate", "reassign"):
            return f"{self.kind} to {self.who}"
        if self.kind == "raise_priority":
            return f"raise priority to {self.priority}"
        if self.kind in ("cancel", "raise_event"):  # a run deadline's (timing_rules/deadline.py)
            return "cancel the run" if self.kind == "cancel" else f"raise event {self.target}"
        return f"run {steps.shown(self.step)}" if self.kind == "run" else f"move to {self.target}"

    def to_json(self) -> Any:
        """``{"kind", "who", "priority", "target"}`` (absent parts null; ``step`` for a run)."""
        doc = {
            "kind": self.kind,
            "who": au.to_json(self.who) if self.who is not None else None,
            "priority": self.priority,
            "target": self.target,
            "with_link": self.with_link,
        }
        if self.step is not None:  # only then: older digests stay as they were
            doc["step"] = steps.shown(self.step)
        return doc


def actions(
    *,
    notify: au.Who | None = None,
    with_link: bool = False,
    escalate_to: au.Who | None = None,
    reassign_to: au.Who | None = None,
    raise_priority_to: int | None = None,
    move_to: str | None = None,
) -> tuple[Action, ...]:
    """The actions named by keyword, in a fixed order (notify first, move last).

    ``with_link`` qualifies ``notify``; without a ``notify`` it is kept on an empty
    notify action, so that the definition check can name the mistake.
    """
    found: list[Action] = []
    if notify is not None or with_link:
        found.append(Action("notify", who=notify, with_link=bool(with_link)))
    if escalate_to is not None:
        found.append(Action("escalate", who=escalate_to))
    if reassign_to is not None:
        found.append(Action("reassign", who=reassign_to))
    if raise_priority_to is not None:
        found.append(Action("raise_priority", priority=raise_priority_to))
    if move_to is not None:
        found.append(Action("move", target=move_to))
    return tuple(found)


#: When a reminder fires, measured from the slot's opening: a fixed offset, or a
#: fraction of the milestone's budget.
Offset = bu.Budget | float


def _describe_offset(offset: Offset) -> str:
    return f"{offset:.0%} of the budget" if isinstance(offset, float) else str(offset)


def _offset_json(offset: Offset | None) -> Any:
    if offset is None:
        return None
    return {"fraction": offset} if isinstance(offset, float) else offset.to_json()


@dataclass(frozen=True, eq=False)
class Reminder:
    """A reminder on milestone ``milestone`` (see the module docs)."""

    milestone: str
    first: Offset
    actions: tuple[Action, ...]
    every: bu.Budget | None = None
    times: int | None = None
    until: Offset | None = None
    quiet_hours: bool = False

    def describe(self) -> str:
        """``at 75% of the finished budget, then every 1 business day: notify holder``."""
        if self.first == 1.0:
            text = f"on breach of {self.milestone}"
        elif isinstance(self.first, float):
            text = f"at {self.first:.0%} of the {self.milestone} budget"
        else:
            text = f"{self.first} after the slot opens ({self.milestone})"
        if self.every:
            text += f", then every {self.every}"
        if self.times:
            text += f", at most {self.times} times"
        if self.until is not None:
            text += f", until {_describe_offset(self.until)}"
        return text + ": " + ", ".join(a.describe() for a in self.actions)

    def to_json(self) -> Any:
        """``{"milestone", "first", "every", "times", "until", "quiet_hours", "actions"}``."""
        return {
            "milestone": self.milestone,
            "first": _offset_json(self.first),
            "every": self.every.to_json() if self.every else None,
            "times": self.times,
            "until": _offset_json(self.until),
            "quiet_hours": self.quiet_hours,
            "actions": [a.to_json() for a in self.actions],
        }


class ReminderOptions(TypedDict, total=False):
    """The keywords every ``reminder`` form takes: how it repeats, then its actions."""

    every: bu.Budget | None
    times: int | None
    until: Offset | None
    quiet_hours: bool
    notify: au.Who | None
    with_link: bool
    escalate_to: au.Who | None
    reassign_to: au.Who | None
    raise_priority_to: int | None
    move_to: str | None


def _reminder(
    of: str,
    first: Offset,
    every: bu.Budget | None = None,
    times: int | None = None,
    until: Offset | None = None,
    quiet_hours: bool = False,
    **action: Any,
) -> Reminder:
    return Reminder(of, first, actions(**action), every, times, until, quiet_hours)


class _ReminderFactory:
    """The ``reminder`` namespace of the DSL (actions by keyword, see :func:`actions`)."""

    def after(
        self, offset: bu.Budget, *, of: str = "finished", **options: Unpack[ReminderOptions]
    ) -> Reminder:
        """First fire ``offset`` after the slot opened."""
        return _reminder(of, offset, **options)

    def at(
        self, fraction: float, *, of: str = "finished", **options: Unpack[ReminderOptions]
    ) -> Reminder:
        """First fire at ``fraction`` (0.75 = 75 %) of the milestone's budget."""
        return _reminder(of, float(fraction), **options)

    def on_breach(self, of: str = "finished", **options: Unpack[ReminderOptions]) -> Reminder:
        """Fire when the milestone is breached (100 % of its budget)."""
        return _reminder(of, 1.0, **options)


reminder: Final = _ReminderFactory()


@dataclass(frozen=True, eq=False)
class Timeout:
    """After ``after`` in the state (business or real time): notify and/or move."""

    after: bu.Budget
    actions: tuple[Action, ...]
    name: str = ""

    def describe(self) -> str:
        """``after 30 real days: move to expired``."""
        return f"after {self.after}: " + ", ".join(a.describe() for a in self.actions)

    def to_json(self) -> Any:
        """``{"name", "after", "actions"}``."""
        return {
            "name": self.name,
            "after": self.after.to_json(),
            "actions": [a.to_json() for a in self.actions],
        }


def timeout(
    after: bu.Budget,
    *,
    name: str = "",
    notify: au.Who | None = None,
    move_to: str | None = None,
    action: steps.ActionLike | None = None,
) -> Timeout:
    """After ``after`` in the state, notify, run an ``action`` (it keeps the run) and/or move."""
    found = actions(notify=notify, move_to=move_to)
    if action is not None:
        found = (*found, Action("run", step=action))
    return Timeout(after, found, name)


# -- priority -----------------------------------------------------------------------------------

DEFAULT_PRIORITY: Final = 3


@dataclass(frozen=True, eq=False)
class Priority:
    """A fixed priority, or one read from the subject (through ``table`` when given)."""

    fixed: int | None = None
    key: ex.Expr | None = None
    table: tuple[tuple[str, int], ...] = ()
    default: int = DEFAULT_PRIORITY

    def to_json(self) -> Any:
        """``{"fixed"}`` or ``{"by", "table", "default"}``."""
        if self.key is None:
            return {"fixed": self.fixed if self.fixed is not None else self.default}
        return {"by": exd.to_json(self.key), "table": dict(self.table), "default": self.default}

    def describe(self) -> str:
        """``2`` or ``by subject.priority (P1: 1, P2: 2), otherwise 3``."""
        if self.key is None:
            return str(self.fixed if self.fixed is not None else self.default)
        table = ", ".join(f"{k}: {v}" for k, v in self.table)
        return (
            f"by {ex.describe(self.key)}"
            + (f" ({table})" if table else "")
            + (f", otherwise {self.default}")
        )


def priority_by(
    key: ex.Expr, table: Mapping[str, int] | None = None, *, default: int = DEFAULT_PRIORITY
) -> Priority:
    """Priority from a subject value: mapped through ``table``, or the value itself if a number."""
    return Priority(
        key=key, table=tuple((str(k), v) for k, v in (table or {}).items()), default=default
    )


def as_priority(value: int | ex.Expr | Priority | None) -> Priority:
    """Normalise what a slot declared into a :class:`Priority`."""
    if isinstance(value, Priority):
        return value
    if value is None:
        return Priority()
    if isinstance(value, ex.Expr):
        return Priority(key=value)
    return Priority(fixed=int(value))


def resolve_priority(priority: Priority, subject: Mapping[str, Any], item: Any = ex.MISSING) -> int:
    """The slot's priority for this subject (1 most urgent); the default when unreadable."""
    if priority.key is None:
        return priority.fixed if priority.fixed is not None else priority.default
    value = ex.value_of(priority.key, ex.Env(subject=subject, item=item))
    if value is ex.MISSING or value is None:
        return priority.default
    if priority.table:
        return dict(priority.table).get(str(value), priority.default)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return priority.default


# -- reminder schedules -------------------------------------------------------------------------


@dataclass(frozen=True)
class ReminderSchedule:
    """When a reminder fires, measured from its milestone clock's start (the slot's opening).

    ``first`` and ``until`` are offsets on a clock (business on a calendar, or
    real); ``every`` is the interval between later firings (None: fire once);
    ``times`` caps the firings. Every firing also stops once the milestone is met.
    """

    first: bu.ResolvedBudget
    every: bu.ResolvedBudget | None
    until: bu.ResolvedBudget | None
    times: int | None


def _offset_budget(
    offset: Offset,
    milestone_budget: bu.ResolvedBudget,
    calendar: str | None,
    day_length: timedelta,
) -> bu.ResolvedBudget:
    if isinstance(offset, float):  # a fraction runs on the milestone's own clock
        whole = milestone_budget.business_time(day_length)
        return bu.ResolvedBudget(milestone_budget.kind, whole * offset, milestone_budget.calendar)
    resolved = bu.resolve_budget(offset, {}, calendar)
    assert resolved is not None  # a plain budget always resolves
    return resolved


def reminder_schedule(
    rem: Reminder,
    milestone_budget: bu.ResolvedBudget,
    calendar: str | None,
    day_length: timedelta = bu.DEFAULT_DAY_LENGTH,
) -> ReminderSchedule:
    """The schedule of ``rem`` for a slot whose milestone resolved to ``milestone_budget``.

    A fraction (``reminder.at(0.75)``) is that share of the milestone's budget on
    the milestone's clock; a fixed offset runs on its own clock, its business
    time on ``calendar`` (the milestone's, else the workflow's) unless it names
    one. ``day_length`` is the calendar's working-day length (see budgets).
    """
    return ReminderSchedule(
        first=_offset_budget(rem.first, milestone_budget, calendar, day_length),
        every=_offset_budget(rem.every, milestone_budget, calendar, day_length)
        if rem.every is not None
        else None,
        until=_offset_budget(rem.until, milestone_budget, calendar, day_length)
        if rem.until is not None
        else None,
        times=rem.times,
    )
