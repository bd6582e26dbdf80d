"""The timeline lines of a slot's clocks: started, paused, resumed, recomputed, met, and the
lines of its breach and at-risk timers firing (pure; the timers are ``deadlines.py``'s)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from taskflow.core.clocks import calendars, clocks
from taskflow.core.clocks.deadlines import AT_RISK, clock_of
from taskflow.core.runs.model import AuditEntry, SlotView

_RECOMPUTE_REASONS = {
    clocks.KEEP_ELAPSED: "the time already spent is kept",
    clocks.RESTART: "the clock starts again now",
    clocks.RETROACTIVE: "the new budget counts from the start",
}


def _iso(value: datetime | None) -> str | None:
    # In UTC whatever the calendar's zone: the same instant reads the same on every line
    # (and the claim statement writes ``clock.met`` lines in SQL, see store/slots/claims.py).
    return value.astimezone(UTC).isoformat() if value is not None else None


def clock_audit(
    before: SlotView | None,
    after: SlotView,
    registry: calendars.Registry,
    now: datetime,
    actor: str | None,
) -> list[AuditEntry]:
    """Timeline lines for what changed in a slot's clocks: started, paused, resumed, met..."""
    old = {c.milestone: c for c in (before.clocks if before is not None else ())}
    lines = []
    for c in after.clocks:
        cal = clocks.calendar_of(registry, c)
        due = _iso(clocks.due_at(c, cal))
        common = {"slot": after.name, "milestone": c.milestone}
        prev = old.get(c.milestone)

        def line(
            kind: str, reason: str | None = None, common: dict[str, Any] = common, **details: Any
        ) -> None:
            lines.append(AuditEntry(kind, now, actor, after.id, reason, {**common, **details}))

        if prev is None:
            line("clock.started", budget=c.budget.describe(), due_at=due)
            continue
        if len(c.recomputes) > len(prev.recomputes):
            policy = c.recomputes[-1].policy
            moved = prev.calendar != c.calendar
            line(
                "clock.recomputed",
                (
                    f"the calendar chain answers {c.calendar or 'real time'} now"
                    if moved
                    else "the subject changed"
                )
                + f"; {_RECOMPUTE_REASONS[policy]}",
                policy=policy,
                old_calendar=prev.calendar,
                new_calendar=c.calendar,
                old_budget=prev.budget.describe(),
                new_budget=c.budget.describe(),
                old_due_at=_iso(clocks.due_at(prev, cal)),
                new_due_at=due,
                breached_at=_iso(clocks.breached_at(c, cal, now, registry)),
            )
        if c.paused and not prev.paused:
            line("clock.paused", elapsed=clocks.duration(clocks.elapsed(c, cal, now)))
        elif prev.paused and not c.paused and c.met_at is None:
            line("clock.resumed", due_at=due)
        if c.met_at is not None and prev.met_at is None:
            line(
                "clock.met",
                due_at=due,
                breached=_iso(clocks.breached_at(c, cal, c.met_at, registry)),
            )
    return lines


def at_risk_line(
    view: SlotView,
    milestone: str,
    at: datetime,
    registry: calendars.Registry,
    now: datetime,
    base: Mapping[str, Any] | None = None,
) -> AuditEntry:
    """The ``clock.at_risk`` line of the slot's ``milestone`` clock, past its at-risk
    share since ``at``: the slot, the milestone, the due instant and ``at`` (``base``, the
    firing's key and lateness, first)."""
    clock = clock_of(view, milestone)
    due = clocks.due_at(clock, clocks.calendar_of(registry, clock)) if clock else None
    return AuditEntry(
        "clock.at_risk",
        now,
        None,
        view.id,
        f"the {milestone} clock of {view.name} passed its at-risk share at {_iso(at)}",
        {
            **(base or {}),
            "slot": view.name,
            "milestone": milestone,
            "due_at": _iso(due),
            "at_risk_at": _iso(at),
        },
    )


def clock_firing(
    kind: str,
    view: SlotView,
    milestone: str,
    at: datetime,
    registry: calendars.Registry,
    now: datetime,
    base: Mapping[str, Any],
) -> AuditEntry:
    """The line of a clock's timer of ``kind`` (breach or at risk) due ``at`` firing."""
    if kind == AT_RISK:
        return at_risk_line(view, milestone, at, registry, now, base)
    return AuditEntry(
        "clock.breached",
        now,
        None,
        view.id,
        f"the {milestone} budget of {view.name} ran out at {at.isoformat()}",
        {**base, "slot": view.name, "milestone": milestone},
    )
