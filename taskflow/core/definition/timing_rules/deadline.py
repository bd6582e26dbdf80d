"""A deadline on a whole run, across its states: ``deadline = Deadline(...)`` on a workflow.

Due a duration after the run starts (business time on the workflow's calendar, or real
time; a budget table by the subject allowed) or at the date a subject attribute holds
(``at=subject.due_date``: a date-time in ``zone`` when it has no offset; a bare date is the
end of that day in ``zone``, or, with ``calendar``, the end of that business day). It has
two milestones of its own, at risk and breached, and actions on each: on breach, notify,
move the run to a state, cancel it, or raise an event on it (as ``raiseEvent`` would).
See docs/sla.md, "Run deadlines".
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from typing import Any

from taskflow.core.definition import audience as au
from taskflow.core.definition import budgets as bu
from taskflow.core.definition import sla
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.timing_rules import timing


@dataclass(frozen=True, eq=False, init=False)
class Deadline(timing.Timing):
    """When the run is due, and what its at-risk and breach milestones do."""

    after: bu.BudgetLike | None
    at: ex.Expr | None
    zone: str | None
    calendar: str | None
    #: What the breach does, in order: notify, raise an event, move, cancel.
    on_breach: tuple[sla.Action, ...]
    #: What crossing the at-risk share does (notify only).
    on_risk: tuple[sla.Action, ...]

    def __init__(
        self,
        *,
        after: bu.BudgetLike | None = None,
        at: ex.Expr | None = None,
        zone: str | None = None,
        calendar: str | None = None,
        notify: au.Who | None = None,
        notify_at_risk: au.Who | None = None,
        raise_event: str | None = None,
        move_to: str | None = None,
        cancel: bool = False,
    ) -> None:
        found = list(sla.actions(notify=notify))
        if raise_event is not None:
            found.append(sla.Action("raise_event", target=raise_event))
        found += sla.actions(move_to=move_to)
        if cancel:
            found.append(sla.Action("cancel"))
        set_ = object.__setattr__  # frozen: the constructor's own assignments
        set_(self, "after", after)
        set_(self, "at", at)
        set_(self, "zone", zone)
        set_(self, "calendar", calendar)
        set_(self, "on_breach", tuple(found))
        set_(self, "on_risk", sla.actions(notify=notify_at_risk))

    def describe(self) -> str:
        """``5 business days after the start`` or ``at subject.due_date (end of the business
        day on uk-london)``."""
        if self.at is None:
            return f"{self.after} after the start"
        where = f"end of the business day on {self.calendar}" if self.calendar else self.zone
        return f"at subject.{self.attribute}" + (f" ({where})" if where else "")

    def to_json(self) -> Any:
        """``{"after", "at", "zone", "calendar", "on_breach", "on_risk"}``."""
        return self.timing_json() | {
            "on_breach": [a.to_json() for a in self.on_breach],
            "on_risk": [a.to_json() for a in self.on_risk],
        }


def zone_problem(zone: str | None) -> str | None:
    """Why ``zone`` is not an IANA time zone (None: it is, or none is given)."""
    if zone is None:
        return None
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return f"time zone {zone!r} is unknown"
    return None
