"""What a slot's or a state's deadlines are: clocks to start or meet, timers to arm.

Pure functions of a definition, a slot (or run) as it now is, a calendar
registry and ``now``. The engine keeps the clock ledgers on the slots (started
when a slot opens, met when it is claimed or satisfied, paused and resumed by
pausing states, re-budgeted when the subject changes); the shell asks this
module which timers should be armed for the slots and state a decision touched
and arms, moves or cancels timer rows to match (see ``service/clocks/deadlines.py``).

Timers are keyed by what they stand for (``<slot>:breach:finished``, ``<slot>:at_risk:finished``,
``<slot>:reminder:0``, ``<run>:<visit>:timeout:0``): one row per key, re-armed
in place, so a firing count survives pauses and recomputes. The timeline lines of clocks and of
their firings are ``clock_lines.py``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from taskflow.core.clocks import calendars, chain, clocks
from taskflow.core.clocks.timer_states import TimerSpec
from taskflow.core.definition import budgets as bu
from taskflow.core.definition import sla
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import CLAIMED, LIVE, OPEN, SATISFIED, RunView, SlotView
from taskflow.core.runs.statuses import RunStatus, SlotStatus
from taskflow.core.steps import step_timers

BREACH, REMINDER, TIMEOUT = "breach", "reminder", "timeout"
#: The timer of a running clock crossing its at-risk share of the budget (``clock.at_risk``).
AT_RISK = "at_risk"
#: A delayed start's timer: the worker starts the scheduled run (``core/runs/scheduling.py``).
START = "start"


# -- clocks on slots ---------------------------------------------------------------------------


def milestone_budget(
    definition: Definition,
    milestone: sla.Milestone,
    subject: Mapping[str, Any],
    holder: str | None = None,
    people: chain.People = chain.NOBODY,
) -> bu.ResolvedBudget | None:
    """The milestone's budget for this subject and holder, on the calendar its chain names
    (``core/clocks/chain.py``: the one rule; without a chain its calendar, else the
    workflow's)."""
    return chain.resolve(definition.calendar, milestone, subject, holder, people)[0]


def sync_clocks(
    definition: Definition,
    view: SlotView,
    subject: Mapping[str, Any],
    now: datetime,
    people: chain.People = chain.NOBODY,
) -> SlotView:
    """Start the slot's clocks when it opens; meet them when it is claimed or satisfied;
    move an unmet clock whose chain asks the holder onto the calendar its holder now
    answers (a holder ``people`` does not know keeps the calendar it has)."""
    decl = definition.slot(view.state, view.name)
    ledger = view.clocks
    if not ledger and view.status in (OPEN, CLAIMED, SATISFIED) and view.opened_at is not None:
        started = []
        for ms in decl.milestones:
            budget = milestone_budget(definition, ms, subject, view.holder, people)
            if budget is not None:
                started.append(clocks.start(ms.kind, budget, view.opened_at))
        ledger = tuple(started)
    elif view.status in LIVE:
        ledger = chain.rechain(definition.calendar, decl, ledger, view.holder, subject, now, people)
        ledger = chain.on_leave(decl, ledger, view.holder, now, people)
    if view.status in (CLAIMED, SATISFIED):
        met_at = view.satisfied_at if view.status == SATISFIED else view.claimed_at
        ledger = tuple(
            clocks.meet(c, met_at or now)
            if c.milestone == "assigned" or view.status == SATISFIED
            else c
            for c in ledger
        )
    return view if ledger == view.clocks else dataclasses.replace(view, clocks=ledger)


def rebudget(
    definition: Definition,
    view: SlotView,
    subject: Mapping[str, Any],
    now: datetime,
    people: chain.People = chain.NOBODY,
) -> SlotView:
    """Re-derive the budgets of unmet clocks for a changed subject at ``now``, each under its
    milestone's recompute policy (``clocks.rebudget``); a holder ``people`` does not know
    answers the chain with the calendar their clock has."""
    decl = definition.slot(view.state, view.name)
    ledger = []
    for c in view.clocks:
        ms = decl.milestone(c.milestone)
        budget = (
            milestone_budget(
                definition,
                ms,
                subject,
                view.holder,
                chain.knowing(ms, c.calendar, view.holder, people),
            )
            if ms is not None
            else None
        )
        if ms is None or budget is None:
            ledger.append(c)
            continue
        ledger.append(clocks.rebudget(c, budget, now, ms.recompute))
    new = tuple(ledger)
    return view if new == view.clocks else dataclasses.replace(view, clocks=new)


def paused(view: SlotView, now: datetime) -> SlotView:
    """The slot with every clock standing still from ``now``."""
    return dataclasses.replace(view, clocks=tuple(clocks.pause(c, now) for c in view.clocks))


def resumed(view: SlotView, now: datetime) -> SlotView:
    """The slot with every paused clock running again from ``now``."""
    return dataclasses.replace(view, clocks=tuple(clocks.resume(c, now) for c in view.clocks))


# -- timers ------------------------------------------------------------------------------------


def _generation(clock: clocks.Clock | None, policies: tuple[str, ...]) -> str:
    """The key suffix of a clock's timers after recomputes that start them afresh: a
    ``restart`` (breach, at-risk and reminders again) or a ``retroactive`` recompute (breach
    and at-risk judged again); none before the first, so older keys stay as they were."""
    n = sum(r.policy in policies for r in clock.recomputes) if clock is not None else 0
    return f":{n}" if n else ""


_JUDGED_AGAIN = (clocks.RESTART, clocks.RETROACTIVE)


def _breach_timers(
    view: SlotView, c: clocks.Clock, registry: calendars.Registry, fired: Mapping[str, int]
) -> list[TimerSpec]:
    """A breach timer per generation of the clock that has not fired: an ended term's breach
    on record at its instant (a recompute came before the worker), the running term's at its
    due instant (or at its own breach on record, under ``keep-elapsed``)."""
    cal = clocks.calendar_of(registry, c)
    on_record = clocks.generation_breaches(c, cal, registry)
    current = clocks.generation(c)
    specs = []
    for gen in sorted({*on_record, current}):
        key = f"{view.id}:{BREACH}:{c.milestone}{f':{gen}' if gen else ''}"
        due = on_record.get(gen) or (clocks.due_at(c, cal) if gen == current else None)
        if due is not None and fired.get(key, 0) == 0:
            specs.append(TimerSpec(key, view.run_id, view.id, BREACH, c.milestone, due))
    return specs


def clock_of(view: SlotView, milestone: str) -> clocks.Clock | None:
    """The slot's clock of ``milestone``, if it has one."""
    return next((c for c in view.clocks if c.milestone == milestone), None)


def at_risk_at(
    clock: clocks.Clock, cal: calendars.BusinessClock, share: float = clocks.DEFAULT_AT_RISK
) -> datetime | None:
    """When the clock's spent business time reaches ``share`` of its budget (None while a
    pause holds it short)."""
    return clocks.instant_at(clock, cal, clocks.budget_time(clock, cal) * share)


def _reminder_due(
    rem: sla.Reminder, clock: clocks.Clock, cal: calendars.BusinessClock, fired: int
) -> datetime | None:
    length = clocks.day_length(cal)
    schedule = sla.reminder_schedule(rem, clock.budget, clock.calendar, length)
    if fired >= 1 and schedule.every is None:
        return None
    if schedule.times is not None and fired >= schedule.times:
        return None
    offset = schedule.first.business_time(length)
    if schedule.every is not None:
        offset += schedule.every.business_time(length) * fired
    if schedule.until is not None and offset > schedule.until.business_time(length):
        return None
    return clocks.instant_at(clock, cal, offset)


def slot_timers(
    definition: Definition,
    view: SlotView,
    registry: calendars.Registry,
    fired: Mapping[str, int],
    at_risk: float = clocks.DEFAULT_AT_RISK,
) -> list[TimerSpec]:
    """The timers a slot needs now: a breach and an at-risk timer per unmet clock, its
    reminders' next firings.

    A slot that is no longer live, and a clock that is met or paused, needs none;
    ``fired`` holds how often each key has fired already. The at-risk timer is due where
    the clock's spent business time reaches ``at_risk`` of its budget (each fires once).
    """
    if view.status not in LIVE or view.status == SlotStatus.PENDING:
        return []
    decl = definition.slot(view.state, view.name)
    specs = []
    for c in view.clocks:
        if c.met_at is None:
            specs += _breach_timers(view, c, registry, fired)
        gen = _generation(c, _JUDGED_AGAIN)
        key = f"{view.id}:{AT_RISK}:{c.milestone}{gen}"
        if c.met_at is None and fired.get(key, 0) == 0 and 0 < at_risk < 1:
            due = at_risk_at(c, clocks.calendar_of(registry, c), at_risk)
            if due is not None:
                specs.append(TimerSpec(key, view.run_id, view.id, AT_RISK, c.milestone, due))
    for index, rem in enumerate(decl.reminders):
        clock = clock_of(view, rem.milestone)
        if clock is None or clock.met_at is not None:
            continue
        key = f"{view.id}:{REMINDER}:{index}{_generation(clock, (clocks.RESTART,))}"
        due = _reminder_due(rem, clock, clocks.calendar_of(registry, clock), fired.get(key, 0))
        if due is not None:
            specs.append(TimerSpec(key, view.run_id, view.id, REMINDER, str(index), due))
    return specs


def state_timers(
    definition: Definition, run: RunView, registry: calendars.Registry, fired: Mapping[str, int]
) -> list[TimerSpec]:
    """The current state's timeouts, counted from when the run entered it (each fires once);
    a delayed start's one timer, due when it starts (``state_entered_at``, see
    ``core/runs/scheduling.py``)."""
    if run.status == RunStatus.SCHEDULED:
        return [TimerSpec(f"{run.id}:{START}", run.id, None, START, "", run.state_entered_at)]
    if run.status != RunStatus.ACTIVE:
        return []
    specs = []
    for index, timeout in enumerate(definition.state(run.state).timeouts):
        key = f"{run.id}:{run.visit}:{TIMEOUT}:{index}"
        budget = bu.resolve_budget(timeout.after, run.subject, definition.calendar)
        if budget is None or fired.get(key, 0):
            continue
        due = after(registry, run.state_entered_at, budget)
        specs.append(TimerSpec(key, run.id, None, TIMEOUT, str(index), due))
    for key, kind, ref, due in step_timers.specs(definition, run, registry, fired):
        specs.append(TimerSpec(key, run.id, None, kind, ref, due))
    return specs


def after(registry: calendars.Registry, start: datetime, budget: bu.ResolvedBudget) -> datetime:
    """The instant ``budget`` after ``start``: real time, or working time on its calendar."""
    cal: calendars.BusinessClock = (
        calendars.REAL_TIME
        if budget.kind == "real" or budget.calendar is None
        else registry.get(budget.calendar)
    )
    return cal.add(start, budget.business_time(clocks.day_length(cal)))


def nearest_due(view: SlotView, registry: calendars.Registry) -> datetime | None:
    """The slot's nearest unmet due instant while it is live (the inbox orders by it)."""
    if view.status not in LIVE:
        return None
    return clocks.nearest_due(view.clocks, registry)


# -- quiet hours ---------------------------------------------------------------------------------


def deliver_at(cal: calendars.BusinessClock | None, now: datetime) -> datetime:
    """When a notification reaches a person: now, or the next opening of their calendar."""
    if cal is None or cal.is_open(now):
        return now
    return cal.next_open(now)
