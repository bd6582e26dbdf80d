"""Timeline lines as automation events: which line kinds set off which trigger.

The names automations use are the public event names (docs/events.md); the timeline
keeps its own kinds. Simulation reads recorded lines through this map; the worker is to
read the same map, so both see the same events.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from taskflow.core.automations.decide import Event

#: timeline kind -> trigger.
KIND_TO_TRIGGER: Mapping[str, str] = {
    "slot.opened": "slot.opened",
    "slot.claimed": "slot.claimed",
    "slot.satisfied": "slot.completed",
    "clock.breached": "slot.breached",
    "clock.at_risk": "clock.at_risk",
    "clock.forecast_at_risk": "clock.forecast_at_risk",
    "state.entered": "run.state_entered",
    "run.completed": "run.ended",
    "run.cancelled": "run.ended",
    "subject.updated": "subject.changed",
    "event.raised": "event.raised",
}

#: Where an automation's hop count rides on the lines its actions write.
DEPTH_DETAIL = "automation_depth"


def event_of(
    *,
    line_id: int,
    kind: str,
    at: datetime,
    run_id: str,
    subject_id: str,
    subject: Mapping[str, Any],
    slot: str | None,
    actor: str | None,
    details: Mapping[str, Any],
) -> Event | None:
    """The event a recorded line is to automations (None: no trigger listens to it)."""
    trigger = KIND_TO_TRIGGER.get(kind)
    if trigger is None:
        return None
    facts: dict[str, Any] = {k: v for k, v in details.items() if isinstance(v, str | int | float)}
    if slot is not None:
        facts["slot"] = slot
    depth = details.get(DEPTH_DETAIL, 0)
    return Event(
        id=str(line_id),
        kind=trigger,
        at=at,
        run_id=run_id,
        subject_key=subject_id,
        subject=subject,
        facts=facts,
        actor=actor or "",
        depth=depth if isinstance(depth, int) else 0,
    )


def event_of_line(line: Mapping[str, Any]) -> Event | None:
    """:func:`event_of` for a line as the store reads it (``id`` or ``line_id``, ``kind``,
    ``at``, ``run_id``, ``subject_id``, ``subject``, ``slot``, ``actor``, ``details``)."""
    return event_of(
        line_id=line["line_id"] if "line_id" in line else line["id"],
        kind=line["kind"],
        at=line["at"],
        run_id=line["run_id"],
        subject_id=line["subject_id"],
        subject=line["subject"] or {},
        slot=line["slot"],
        actor=line["actor"],
        details=line["details"] or {},
    )
