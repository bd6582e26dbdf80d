"""Needs attention: the reasons a run, slot, timer or kept event waits for a person.

Pure: the reasons, what an item of the list carries, and the windows they are
judged by (``TASKFLOW_IDLE_AFTER``, ``TASKFLOW_EVENT_EXPIRING_WITHIN``); the
store finds the items (``store/operate/attention.py``), each reason from its own index.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class Reason(StrEnum):
    """Why something needs a person (the ``reason`` of a needs-attention item)."""

    #: The state's completion rule held but no route matched: the run waits.
    ROUTE_UNMATCHED = "ROUTE_UNMATCHED"
    #: A timer failed every attempt and is parked dead.
    TIMER_DEAD = "TIMER_DEAD"
    #: A timer's firing failed and is being retried with backoff.
    TIMER_FAILING = "TIMER_FAILING"
    #: A slot is held by a deactivated principal.
    HELD_BY_INACTIVE = "HELD_BY_INACTIVE"
    #: A slot breached its SLA and nobody holds it.
    BREACHED_UNHELD = "BREACHED_UNHELD"
    #: An active run has not changed for longer than the idle age.
    IDLE = "IDLE"
    #: An event kept for a slot not yet open expires soon.
    EVENT_EXPIRING = "EVENT_EXPIRING"
    #: A webhook endpoint was disabled: every delivery failed for TASKFLOW_WEBHOOK_DISABLE_AFTER.
    WEBHOOK_DISABLED = "WEBHOOK_DISABLED"
    #: An automatic step failed its last attempt and no on_error route took it: parked.
    STEP_PARKED = "STEP_PARKED"
    #: A saga step's compensation failed its last attempt: the step is not undone.
    COMPENSATION_FAILED = "COMPENSATION_FAILED"
    #: A published automation stopped acting: its author lost the grant, or it met a loop.
    AUTOMATION_STOPPED = "AUTOMATION_STOPPED"
    #: The read replica is further behind than its bound (or does not answer): reads that
    #: may lag go to the primary meanwhile. Admins only; it concerns no run.
    REPLICA_LAGGING = "REPLICA_LAGGING"
    #: A holiday feed fetched into the calendars folder keeps failing to refresh: its
    #: calendars keep the last good copy. Admins only; it concerns no run.
    CALENDAR_FEED_FAILING = "CALENDAR_FEED_FAILING"


#: What clears each reason (docs/operations.md says the same).
REMEDY: dict[Reason, str] = {
    Reason.ROUTE_UNMATCHED: "goto the state it should be in, or update the subject",
    Reason.TIMER_DEAD: "retryTimer, rescheduleTimer or discardTimer",
    Reason.TIMER_FAILING: "mend the cause, or rescheduleTimer",
    Reason.HELD_BY_INACTIVE: "reassignHeld (to someone, or null to release)",
    Reason.BREACHED_UNHELD: "assign the slot, or someone claims it",
    Reason.IDLE: "goto, pauseClocks, or cancelRun",
    Reason.EVENT_EXPIRING: "goto the state whose slot awaits it, or let it expire",
    Reason.WEBHOOK_DISABLED: "mend the receiver, then updateWebhookEndpoint(enabled: true)",
    Reason.STEP_PARKED: "mend the cause, then retryStep; or goto another state",
    Reason.COMPENSATION_FAILED: "undo the step by hand (the item stays, as the record)",
    Reason.AUTOMATION_STOPPED: "mend the cause (the author's grant, the loop), then "
    "publishAutomation again (or pauseAutomation)",
    Reason.REPLICA_LAGGING: "mend the replica (its replay, its link to the primary, its "
    "load); it clears itself once the replica is back within the bound",
    Reason.CALENDAR_FEED_FAILING: "mend the feed (its address, its certificate, its "
    "server) or fetch a copy by hand (taskflow calendar fetch-ics); it clears itself at the "
    "worker's next successful ask",
}


@dataclass(frozen=True)
class Windows:
    """The ages reasons are judged by, as of ``now``."""

    now: datetime
    idle_after: timedelta
    expiring_within: timedelta

    @property
    def idle_before(self) -> datetime:
        """A run unchanged since before this instant is idle."""
        return self.now - self.idle_after

    @property
    def expiring_before(self) -> datetime:
        """A kept event expiring before this instant is about to expire."""
        return self.now + self.expiring_within


@dataclass(frozen=True)
class Item:
    """One thing that needs attention, and what it concerns."""

    reason: Reason
    since: datetime
    #: A stable key within the reason (a run, slot, timer or kept event id): the cursor's tie-break.
    ref: str
    #: The run, its workflow and state; None for an item about no run (REPLICA_LAGGING).
    run_id: str | None
    workflow: str | None
    state: str | None
    slot_id: str | None = None
    timer_id: int | None = None
    principal: str | None = None
    #: When it ends by itself, if it does (a kept event's expiry).
    until: datetime | None = None
    detail: str = ""

    @property
    def remedy(self) -> str:
        return REMEDY[self.reason]
