"""A run's deadline: when it is due, its milestones, its timers and its timeline lines.

Pure, and derived each time from the definition's ``deadline``
(``core/definition/timing_rules/deadline.py``),
the run's start and subject, and the calendars: nothing is stored but the timers. A
duration counts from the run's start; a subject date is read with ``subject_dates``. A
changed subject therefore moves the deadline at once: for a duration that depends on the
subject (``budget_by``) the new budget counts from the start (``keep-elapsed``: the time
already spent is kept, and a breach already fired stays on record, its timer fired once).

Timers are keyed ``<run>:deadline:at_risk`` and ``<run>:deadline:breach``, armed while the
run is active and cancelled by the run's timer reconciliation when it ends; each fires
once. A deadline already past when the run starts is due at once: the next worker pass
fires it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from taskflow.core.clocks import calendars, clocks, deadlines, subject_dates
from taskflow.core.clocks.timer_states import TimerSpec
from taskflow.core.definition import budgets as bu
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.timing_rules.deadline import Deadline
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import AuditEntry, RunView
from taskflow.core.runs.statuses import RunStatus

#: Timer kinds: the deadline crossing its at-risk share, and the deadline itself.
AT_RISK, BREACH = "deadline_at_risk", "deadline_breach"
KINDS = (AT_RISK, BREACH)
#: Where the due instant comes from.
DURATION, SUBJECT = "duration", "subject"
#: Statuses: before the at-risk share, past it, past the due instant (or ended after it).
ON_TIME, AT_RISK_STATUS, BREACHED = "on_time", "at_risk", "breached"
_ABSENT = "the run then has no deadline"


@dataclass(frozen=True)
class Due:
    """A run's deadline as it now stands: its instant, where it comes from and its at-risk
    instant (None when the run started at or after the due instant)."""

    due_at: datetime
    source: str
    describe: str
    at_risk_at: datetime | None


def _subject_value(rule: Deadline, subject: Mapping[str, Any]) -> Any:
    assert rule.at is not None
    return ex.value_of(rule.at, ex.Env(subject=subject))


def check_subject(definition: Definition, subject: Mapping[str, Any]) -> None:
    """Refuse (``subject_dates.BadSubjectDate``, naming the attribute) a subject whose date
    the run's deadline cannot read, before anything is written."""
    rule = definition.deadline
    if rule is not None and rule.at is not None:
        subject_dates.parse(_subject_value(rule, subject), rule.attribute, absent=_ABSENT)


def due(
    definition: Definition,
    run: RunView,
    registry: calendars.Registry,
    share: float = clocks.DEFAULT_AT_RISK,
) -> Due | None:
    """The run's deadline (None: the workflow declares none, or the subject gives no date).

    The at-risk instant is where ``share`` of the time from the start to the due instant
    has gone: business time on the budget's calendar for a duration, real time for a date.
    """
    rule = definition.deadline
    start = run.started_at or run.state_entered_at
    if rule is None:
        return None
    if rule.at is not None:
        cal = registry.get(rule.calendar) if rule.calendar else None
        try:
            at = subject_dates.parse_instant(
                _subject_value(rule, run.subject), rule.zone, rule.attribute, calendar=cal
            )
        except subject_dates.BadSubjectDate:
            return None  # refused where the subject came in; a run started before has none
        if at is None:
            return None
        risk = start + (at - start) * share if at > start and 0 < share < 1 else None
        return Due(at, SUBJECT, rule.describe(), risk)
    assert rule.after is not None
    budget = bu.resolve_budget(rule.after, run.subject, definition.calendar)
    if budget is None:
        return None
    part = dataclasses.replace(
        budget, duration=budget.duration * share, working_days=budget.working_days * share
    )
    risk_at = deadlines.after(registry, start, part) if 0 < share < 1 else None
    return Due(deadlines.after(registry, start, budget), DURATION, rule.describe(), risk_at)


def status(found: Due, run: RunView, now: datetime, breached_at: datetime | None) -> str:
    """``breached`` when a breach is on record, a live run is past its due instant, or the run
    ended after it; ``at_risk`` when a live run is past its at-risk instant; else ``on_time``.

    A run that ended at its due instant itself, before the breach fired, is on time: whichever
    of the two committed first decides, and the other then finds nothing to do.
    """
    if breached_at is not None:
        return BREACHED
    if run.status != RunStatus.ACTIVE:
        return BREACHED if (run.ended_at or now) > found.due_at else ON_TIME
    if now >= found.due_at:
        return BREACHED
    if found.at_risk_at is not None and now >= found.at_risk_at:
        return AT_RISK_STATUS
    return ON_TIME


def run_timers(
    definition: Definition,
    run: RunView,
    registry: calendars.Registry,
    fired: Mapping[str, int],
    share: float = clocks.DEFAULT_AT_RISK,
) -> list[TimerSpec]:
    """The deadline's timers an active run needs: at risk and breach, each until it fired
    (an instant already past is due at once)."""
    if run.status != RunStatus.ACTIVE or definition.deadline is None:
        return []
    found = due(definition, run, registry, share)
    if found is None:
        return []
    specs = []
    for kind, at in ((AT_RISK, found.at_risk_at), (BREACH, found.due_at)):
        key = f"{run.id}:deadline:{kind.removeprefix('deadline_')}"
        if at is not None and not fired.get(key, 0):
            specs.append(TimerSpec(key, run.id, None, kind, "", at))
    return specs


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


#: The line a subject change that moved the deadline writes.
MOVED, MOVED_REASON = "run.deadline_moved", "the subject changed; the run's deadline moved"


def moved(
    definition: Definition, before: RunView, after: RunView, registry: calendars.Registry
) -> dict[str, Any] | None:
    """The details of the ``run.deadline_moved`` line (old and new due instant, the source)
    when a subject change moved the deadline; None when it did not."""
    if definition.deadline is None:
        return None
    old, new = due(definition, before, registry), due(definition, after, registry)
    old_at, new_at = (old.due_at if old else None), (new.due_at if new else None)
    if old_at == new_at:
        return None
    source = new.source if new else (old.source if old else DURATION)
    return {"old_due_at": _iso(old_at), "new_due_at": _iso(new_at), "source": source}


def firing_line(kind: str, found: Due | None, at: datetime, now: datetime, base: Any) -> AuditEntry:
    """The line of the deadline's at-risk or breach timer, due ``at``, firing at ``now``."""
    due_at = found.due_at if found is not None else at
    if kind == AT_RISK:
        text = f"the run's deadline ({_iso(due_at)}) is at risk"
        return AuditEntry(
            "run.deadline_at_risk", now, None, None, text,
            {**base, "due_at": _iso(due_at), "at_risk_at": _iso(at)},
        )  # fmt: skip
    return AuditEntry(
        "run.deadline_breached", now, None, None, f"the run's deadline passed at {_iso(at)}",
        {**base, "due_at": _iso(at)},
    )  # fmt: skip


@dataclass(frozen=True)
class Milestone:
    """One of the deadline's milestones: ``at_risk`` or ``breached``, when it falls (None: an
    at-risk instant the run started past) and when its timer fired (None: not yet)."""

    kind: str
    at: datetime | None
    fired_at: datetime | None


@dataclass(frozen=True)
class Reading:
    """A run's deadline as a screen shows it at ``now``."""

    due: Due
    status: str
    breached_at: datetime | None
    milestones: tuple[Milestone, ...]


def read(found: Due, run: RunView, now: datetime, fired: Mapping[str, datetime]) -> Reading:
    """The deadline at ``now``; ``fired`` maps the run's deadline timer kinds that fired to
    the instant they fired for (a breach on record stays, whatever the due instant now)."""
    on_record = fired.get(BREACH)
    return Reading(
        found,
        status(found, run, now, on_record),
        on_record,
        (
            Milestone(AT_RISK_STATUS, found.at_risk_at, fired.get(AT_RISK)),
            Milestone(BREACHED, found.due_at, on_record),
        ),
    )
