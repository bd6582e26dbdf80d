"""When a slot expires, the timers that carry it out, and reading a subject's date.

Pure: the instant is derived from the slot's declaration
(``core/definition/timing_rules/expiry.py``),
its opening instant, the subject and the calendars, each time it is needed (nothing is
stored, so a subject whose date changes moves the expiry the next time the slot is
touched). Timers are keyed ``<slot>:expire`` (closes the slot) and
``<slot>:expire_warning:<i>`` (the i-th warning before it); both are armed while the
slot is live and cancelled by the same reconciliation as every slot timer once it ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from taskflow.core.clocks import calendars, deadlines, subject_dates
from taskflow.core.clocks.timer_states import TimerSpec
from taskflow.core.definition import budgets as bu
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import LIVE, SlotView
from taskflow.core.runs.statuses import SlotStatus

#: Timer kinds: the expiry itself, and a warning before it.
EXPIRE, EXPIRE_WARNING = "expire", "expire_warning"
KINDS = (EXPIRE, EXPIRE_WARNING)


#: The refusal of a subject whose date an expiry reads is no date (``subject_dates``).
BadSubjectDate = subject_dates.BadSubjectDate

#: What leaving an expiry's subject date out means, for the refusal's message.
_ABSENT = "the slot then never expires"


def parse_instant(value: Any, zone: str | None, attribute: str) -> datetime | None:
    """The instant a subject value names: an ISO 8601 date-time (in ``zone``, else UTC, when
    it has no offset) or a date (the end of that day in ``zone``); None when it is absent.

    Anything else is :class:`BadSubjectDate` naming ``attribute``.
    """
    return subject_dates.parse_instant(value, zone, attribute, absent=_ABSENT)


def expires_at(
    definition: Definition,
    view: SlotView,
    subject: Mapping[str, Any],
    registry: calendars.Registry,
) -> datetime | None:
    """When the slot expires (None: never, or not opened yet)."""
    return instant(definition, view.state, view.name, view.opened_at, subject, registry)


def instant(
    definition: Definition,
    state: str,
    name: str,
    opened_at: datetime | None,
    subject: Mapping[str, Any],
    registry: calendars.Registry,
) -> datetime | None:
    """When slot ``name`` of ``state``, opened at ``opened_at``, expires (None: never)."""
    rule = definition.slot(state, name).expires
    if rule is None or opened_at is None:
        return None
    if rule.at is not None:
        value = ex.value_of(rule.at, ex.Env(subject=subject))
        return parse_instant(value, rule.zone, rule.attribute)
    assert rule.after is not None
    budget = bu.resolve_budget(rule.after, subject, rule.calendar or definition.calendar)
    if budget is None:
        return None
    return deadlines.after(registry, opened_at, budget)


def check_subject(definition: Definition, state: str, subject: Mapping[str, Any]) -> None:
    """Refuse (:class:`BadSubjectDate`) a subject whose date an expiring slot of ``state``
    cannot read, before anything is written."""
    for slot in definition.state(state).slots:
        rule = slot.expires
        if rule is not None and rule.at is not None:
            parse_instant(ex.value_of(rule.at, ex.Env(subject=subject)), rule.zone, rule.attribute)


def slot_timers(
    definition: Definition,
    view: SlotView,
    subject: Mapping[str, Any],
    registry: calendars.Registry,
    fired: Mapping[str, int],
) -> list[TimerSpec]:
    """The expiry timers a live, opened slot needs: ``expire`` at its instant (an instant
    already past is due at once) and each warning not yet fired and still ahead of it."""
    if view.status not in LIVE or view.status == SlotStatus.PENDING:
        return []
    rule = definition.slot(view.state, view.name).expires
    if rule is None:
        return []
    try:
        at = expires_at(definition, view, subject, registry)
    except BadSubjectDate:
        return []  # refused where the subject came in; a later bad value just stops expiry
    if at is None:
        return []
    specs = [TimerSpec(f"{view.id}:{EXPIRE}", view.run_id, view.id, EXPIRE, "", at)]
    for index, warning in enumerate(rule.warnings):
        key = f"{view.id}:{EXPIRE_WARNING}:{index}"
        before = bu.resolve_budget(warning.before, subject)
        if before is None or fired.get(key, 0):
            continue
        due = at - before.business_time()
        if view.opened_at is not None and due >= view.opened_at:
            specs.append(TimerSpec(key, view.run_id, view.id, EXPIRE_WARNING, str(index), due))
    return specs


def counts(views: Iterable[SlotView], state: str, visit: int) -> dict[str, int]:
    """``expired.<name>`` for routes: for each slot of ``state`` that expired in visit
    ``visit``, how many times a slot of that name there has expired in the run (this visit
    included); a slot that did not expire in this visit is absent (reads as missing)."""
    mine = [v for v in views if v.state == state and v.status == SlotStatus.EXPIRED]
    now_expired = {v.name for v in mine if v.visit == visit}
    found: dict[str, int] = {}
    for v in mine:
        if v.name in now_expired:
            found[v.name] = found.get(v.name, 0) + 1
    return found


def describe_left(at: datetime, now: datetime) -> str:
    """``expires in 2 days`` / ``expires in 5 hours`` (rounded down), for notices."""
    left = max(at - now, timedelta(0))
    if left >= timedelta(days=1):
        n, unit = left.days, "day"
    elif left >= timedelta(hours=1):
        n, unit = int(left.total_seconds() // 3600), "hour"
    else:
        n, unit = max(int(left.total_seconds() // 60), 0), "minute"
    return f"expires in {n} {unit}{'' if n == 1 else 's'}"


#: The timeline kind of an expiry warning (its notifications are of kind ``expiry``).
WARNED = "expiry.warned"


def warning(
    definition: Definition,
    slot: SlotView,
    ref: str,
    subject: Mapping[str, Any],
    registry: calendars.Registry,
    now: datetime,
) -> tuple[Any, datetime | None, str]:
    """The warning a timer of ``ref`` gives on ``slot``: its declaration, the instant the
    slot expires and the message ("expires in 2 days"), for the worker and the dry run."""
    rule = definition.slot(slot.state, slot.name).expires
    assert rule is not None  # its timers were planned from it
    declared = rule.warnings[int(ref)]
    at = expires_at(definition, slot, subject, registry)
    message = f"{slot.label}: {describe_left(at or now, now)}" + (
        f" ({at.isoformat()})" if at else ""
    )
    return declared, at, message
