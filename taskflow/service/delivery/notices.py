"""Notifications: the rows a firing writes (recipients, quiet hours), and reading them.

Called by the timer loop inside the firing's transaction. One query loads the
principals every notice may reach; ``core.recipients`` decides who they are
(principals the audience admits, attribute rules included, and outsiders named
by address); this module dates each row (quiet hours) and leaves writing to the
caller, so a batch of firings can write its rows at once.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime

from taskflow.core.access import access as access_rules
from taskflow.core.access import working_hours
from taskflow.core.access.principals import Principal
from taskflow.core.clocks import deadlines, firing
from taskflow.core.delivery import recipients
from taskflow.core.runs.model import RunView, SlotView
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.store.access import principals as principal_rows
from taskflow.store.common import db
from taskflow.store.delivery import delivery as delivery_rows
from taskflow.store.delivery import notifications as outbox
from taskflow.store.runs import runs as run_rows


async def outbox_rows(
    services: Services,
    conn: db.Connection,
    run: RunView,
    slot: SlotView | None,
    notices: Sequence[firing.Notice],
    kind: str,
    quiet_hours: bool,
    now: datetime,
) -> list[outbox.NewNotification]:
    """One notification per recipient of ``notices`` (a recipient hears a firing once).

    Quiet hours wait for the recipient's own calendar; an outsider has none, so
    theirs wait for the workflow's (the business hours of the people writing to
    them: the vendor example's reminders go out in Berlin office hours). The slot's
    holder's notices wait for their working hours and leave, quiet hours declared or not.
    """
    if not notices:
        return []
    keys = sorted({k for n in notices for k in n.audience.keys})
    people = await principal_rows.carrying_any(conn, keys) if keys else []
    workflow_calendar = services.catalog.get(run.workflow, run.definition_version).calendar
    rows: list[outbox.NewNotification] = []
    by_id = {p.id: p for p in people}
    holder = slot.holder if slot else None
    for notice in notices:
        found = recipients.decide(
            notice,
            people,
            outsider_calendar=workflow_calendar,
            exclude=[r.recipient for r in rows],
        )
        for r in found:
            person = by_id.get(r.recipient)
            hours = person.working_hours if person else None
            name = hours.calendar if hours and hours.calendar else r.calendar
            cal = None
            if quiet_hours and name and name in services.calendars:
                cal = services.calendars.get(name)
            deliver = deadlines.deliver_at(cal, now)
            if person is not None and (quiet_hours or person.id == holder):
                # Their own weekly windows and leave: it waits for their next working
                # instant (the holder's always: they said when they work).
                deliver = working_hours.next_working_instant(
                    hours, person.leave, deliver, functools.partial(deadlines.deliver_at, cal)
                )
            rows.append(
                outbox.NewNotification(
                    recipient=r.recipient,
                    run_id=run.id,
                    slot_id=slot.id if slot else None,
                    kind=kind.split(".")[0],
                    message=notice.message,
                    created_at=now,
                    deliver_at=deliver,
                    details={"who": notice.who, "deferred": deliver != now},
                    recipient_email=r.email,
                    recipient_name=r.name,
                    link_requested=r.link_requested,
                )
            )
    return rows


# -- reading ---------------------------------------------------------------------------------------

#: Whose notifications a reader lists: their own, outsiders' (integrations), or all.
MINE, OUTSIDERS, EVERYONE = "mine", "outsiders", "everyone"


async def listing(
    services: Services,
    actor: Principal,
    scope: str,
    *,
    after_id: int,
    limit: int,
    deliverable_now: bool = False,
) -> tuple[list[outbox.NotificationRow], int | None]:
    """Notifications oldest first: the actor's own, or (integrations) outsiders' or everyone's.

    Integrations (the mailer, the help desk) send what the outbox holds, so they read
    every recipient's, of the workflows their grants name; anyone else reads their own.
    """
    workflows = None
    if scope != MINE:
        access.require_integration(actor, f"read the notifications of {scope}")
        workflows = access_rules.workflows_of(access_rules.application(actor))
    async with services.db.connection() as conn:
        if deliverable_now:
            # What a sender could take now (not counted: it changes as senders take).
            found = await delivery_rows.deliverable(
                conn,
                now=services.clock.now(),
                after_id=after_id,
                limit=limit,
                workflows=sorted(workflows) if workflows is not None else None,
                outsiders_only=scope == OUTSIDERS,
                recipient=actor.id if scope == MINE else None,
            )
            return found, None
        return await outbox.listing(
            conn,
            recipient=actor.id if scope == MINE else None,
            outsiders_only=scope == OUTSIDERS,
            after_id=after_id,
            limit=limit,
            workflows=sorted(workflows) if workflows is not None else None,
        )


async def get(
    services: Services, actor: Principal, notification_id: int
) -> outbox.NotificationRow | None:
    """One notification: the actor's own, or any for an integration (others read as absent)."""
    async with services.db.connection() as conn:
        found = await outbox.notification(conn, notification_id)
        run = await run_rows.get_run(conn, found.run_id) if found is not None else None
    if found is None or not access_rules.may_read_notification(
        actor, found.recipient, run.view.workflow if run else None
    ):
        return None
    return found
