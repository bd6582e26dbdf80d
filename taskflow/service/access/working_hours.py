"""Setting a principal's working hours and leave (``setWorkingHours``, ``addLeave``,
``removeLeave``): the principal themself or an admin, one transaction each."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.access import principals as core
from taskflow.core.access import working_hours as wh
from taskflow.service.access import access
from taskflow.service.clocks import deadlines
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.store.access import principals as rows


def _may_change(actor: core.Principal, principal_id: str, what: str) -> None:
    # People keep their own hours and leave; admins keep everyone's (an absence entered
    # by HR). Leads do not: a lead's power reaches slots, never principals.
    if principal_id != actor.id:
        access.require_admin(actor, f"set another principal's {what}")


def _found(principal: core.Principal | None, principal_id: str) -> core.Principal:
    if principal is None:
        raise errors.NotFound(f"No principal with id {principal_id!r}.")
    return principal


@retry.retried("set working hours")
async def set_working_hours(
    services: Services,
    actor: core.Principal,
    principal_id: str,
    *,
    time_zone: str,
    windows: Mapping[str, Any] | None,
    calendar: str | None,
    clear: bool = False,
) -> core.Principal:
    """Store a principal's weekly windows (or named calendar); ``clear``: unset them."""
    _may_change(actor, principal_id, "working hours")
    hours = None if clear else wh.build_hours(time_zone, windows, calendar)
    if hours is not None and hours.calendar and hours.calendar not in services.calendars:
        raise errors.ValidationError(
            f"there is no calendar {hours.calendar!r}; name one of "
            f"{', '.join(sorted(services.calendars.names())) or 'the calendars/ files'}.",
            field="calendar",
        )
    async with services.db.transaction() as conn:
        stored = await rows.set_working_hours(conn, principal_id, hours, services.clock.now())
    return _found(stored, principal_id)


@retry.retried("add leave")
async def add_leave(
    services: Services,
    actor: core.Principal,
    principal_id: str,
    start: datetime,
    end: datetime,
    note: str | None,
) -> core.Principal:
    """Add one absence ``[start, end)`` (overlapping ones are kept apart: each its own entry)."""
    _may_change(actor, principal_id, "leave")
    leave = wh.build_leave(start, end, note)
    async with services.db.transaction() as conn:
        principal = _found(await rows.lock(conn, principal_id), principal_id)
        if leave in principal.leave:
            return principal  # the same absence twice: already there
        if len(principal.leave) >= wh.MAX_LEAVE:
            raise errors.ValidationError(
                f"{principal_id!r} has {wh.MAX_LEAVE} leave entries, the most kept; "
                "remove past ones first (removeLeave).",
                field="from",
            )
        now = services.clock.now()
        stored = await rows.set_leave(conn, principal_id, (*principal.leave, leave), now)
        await deadlines.holder_on_leave(services, conn, principal_id, now, actor.id)
    return _found(stored, principal_id)


@retry.retried("remove leave")
async def remove_leave(
    services: Services, actor: core.Principal, principal_id: str, start: datetime, end: datetime
) -> core.Principal:
    """Remove the absence ``[start, end)``; refused (nothing changed) when there is none."""
    _may_change(actor, principal_id, "leave")
    async with services.db.transaction() as conn:
        principal = _found(await rows.lock(conn, principal_id), principal_id)
        kept = tuple(e for e in principal.leave if (e.start, e.end) != (start, end))
        if len(kept) == len(principal.leave):
            raise errors.ValidationError(
                f"{principal_id!r} has no leave from {start.isoformat()} to {end.isoformat()}; "
                "read the principal's leave for the exact instants.",
                field="from",
            )
        now = services.clock.now()
        stored = await rows.set_leave(conn, principal_id, kept, now)
        await deadlines.holder_on_leave(services, conn, principal_id, now, actor.id)
    return _found(stored, principal_id)
