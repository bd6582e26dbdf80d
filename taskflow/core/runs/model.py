"""Immutable views of runs and slots, timeline entries, and what a decision returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from taskflow.core.clocks import clocks as sla_clocks
from taskflow.core.definition import audience as au
from taskflow.core.runs.statuses import ENDED as ENDED
from taskflow.core.runs.statuses import LIVE as LIVE
from taskflow.core.runs.statuses import RunStatus, SlotStatus

#: Slot statuses, in lifecycle order (``statuses.SlotStatus``; its table says the moves).
PENDING, OPEN, CLAIMED, SATISFIED, CANCELLED, EXPIRED = (
    SlotStatus.PENDING,
    SlotStatus.OPEN,
    SlotStatus.CLAIMED,
    SlotStatus.SATISFIED,
    SlotStatus.CANCELLED,
    SlotStatus.EXPIRED,
)
#: Run statuses (``statuses.RunStatus``).
ACTIVE, COMPLETED, RUN_CANCELLED = RunStatus.ACTIVE, RunStatus.COMPLETED, RunStatus.CANCELLED


@dataclass(frozen=True)
class RunView:
    """A run as the engine sees it."""

    id: str
    workflow: str
    definition_version: int
    state: str
    status: str
    visit: int
    subject: Mapping[str, Any]
    state_entered_at: datetime
    ended_at: datetime | None = None
    #: Since when the current state is done but no route matched (null: not so).
    unmatched_at: datetime | None = None
    #: What automatic steps returned, by state name (``result.<state>`` in conditions).
    results: Mapping[str, Any] = field(default_factory=dict)
    #: What ``steps.once`` recorded for the run, by name (loaded with it: hooks read it).
    once: Mapping[str, Any] = field(default_factory=dict)
    #: When the run started (a run deadline's duration counts from it; None: not read).
    started_at: datetime | None = None
    #: Its subject was deleted (``deleteSubject``): no further action is taken on it.
    subject_gone: bool = False


@dataclass(frozen=True)
class SlotView:
    """A slot (human task) as the engine sees it."""

    id: str
    run_id: str
    visit: int
    state: str
    name: str
    waits_for: str
    status: str
    audience: au.Audience
    delegates: au.Audience
    priority: int
    label: str
    version: int = 1
    item_index: int | None = None
    item: Any = None
    holder: str | None = None
    payload: Mapping[str, Any] | None = None
    opened_at: datetime | None = None
    claimed_at: datetime | None = None
    satisfied_at: datetime | None = None
    satisfied_by: str | None = None
    cancelled_at: datetime | None = None
    #: What the timeline says of who held it (``holding.py``): the first claim or assignment,
    #: the µs of held intervals already closed, and the start of the open one.
    picked_at: datetime | None = None
    held_us: int = 0
    held_since: datetime | None = None
    #: SLA milestone clocks (ledgers; see core.clocks), started when the slot opens.
    clocks: tuple[sla_clocks.Clock, ...] = ()

    @property
    def live(self) -> bool:
        return self.status in LIVE


@dataclass(frozen=True)
class AuditEntry:
    """One line of the timeline. ``kind`` is dotted: ``slot.claimed``, ``route.unmatched``..."""

    kind: str
    at: datetime
    actor: str | None
    slot_id: str | None = None
    reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """What a decision changed: the run, the slots created or changed, the timeline lines."""

    run: RunView
    created: tuple[SlotView, ...]
    changed: tuple[SlotView, ...]
    audit: tuple[AuditEntry, ...]
    #: True when the run row itself changed (state, status, visit, subject).
    run_changed: bool
    #: (name, value) recorded by ``steps.once`` in a hook during this decision.
    once: tuple[tuple[str, Any], ...] = ()
