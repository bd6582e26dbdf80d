"""What each action of an automation does, through the use case a person's (or an
application's) call would run: the worker calls :func:`do` for each action, as the
principal ``automation:<id>`` with its author's powers, inside the transaction of the
decision (each use case's own transaction is a savepoint of it).

A use case's refusal (the author may not raise that event, the slot is not open, the
subject's workflow is not granted...) rolls back only that action's savepoint and is
written as an ``automation.action_skipped`` line saying why; the other actions go on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskflow import errors
from taskflow.core.access import access
from taskflow.core.access.principals import Principal
from taskflow.core.automations import decide as rules_decide
from taskflow.core.automations import document as rules
from taskflow.core.automations import timeline
from taskflow.core.clocks import firing
from taskflow.core.definition import audience as au
from taskflow.core.definition import budgets as bu
from taskflow.core.delivery import webhook_events
from taskflow.core.runs import scheduling
from taskflow.core.runs.model import AuditEntry
from taskflow.service.access import principals as principal_service
from taskflow.service.clocks import escalation
from taskflow.service.common.container import Services
from taskflow.service.delivery import notices
from taskflow.service.runs import events, runs, starting
from taskflow.service.slots import candidates, slots
from taskflow.store.automations import automations as store
from taskflow.store.automations.automations import AutomationRow
from taskflow.store.common import db
from taskflow.store.delivery import notifications
from taskflow.store.delivery import webhooks as webhook_store
from taskflow.store.runs import runs as run_rows
from taskflow.store.runs import timeline as lines

#: Actions that are timeline lines of their own (no use case behind them).
LINE_ACTIONS = {
    "comment": ("automation.comment", "text"),
    "add_label": ("automation.label", "label"),
}


@dataclass(frozen=True)
class Doing:
    """Where an action runs: services bound to the decision's transaction (``conn``), the
    principal it acts as, the event that enrolled the run."""

    services: Services
    conn: db.Connection
    actor: Principal
    event: rules_decide.Event
    #: The author's own id (``actor`` is the author's powers under ``automation:<id>``):
    #: what an ownership rule (a webhook endpoint's owner) compares with.
    author: str = ""


#: An action's work: None when done, else why it was not (a refusal raises instead).
Work = Callable[[Doing, Mapping[str, Any]], Awaitable[str | None]]


async def do(
    services: Services,
    conn: db.Connection,
    actor: Principal,
    event: rules_decide.Event,
    action: rules.Action,
    author: str = "",
) -> None:
    """One action; a refusal or a verb not done yet is an ``automation.action_skipped`` line."""
    now = services.clock.now()
    if action.verb in LINE_ACTIONS:
        kind, name = LINE_ACTIONS[action.verb]
        entry = AuditEntry(kind, now, actor.id, details={name: action.params[name]})
        await lines.append_audit(conn, event.run_id, [entry])
        return
    work = WORK.get(action.verb)
    if work is None:
        why: str | None = "not done by the worker yet"
    else:
        try:
            why = await work(Doing(services, conn, actor, event, author), action.params)
        except errors.TaskflowError as refused:  # its savepoint rolled back: say why
            if isinstance(refused, errors.InternalError):
                raise
            why = refused.message
    if why is not None:
        details = {"do": action.verb, "why": why}
        skipped = AuditEntry("automation.action_skipped", now, actor.id, details=details)
        await lines.append_audit(conn, event.run_id, [skipped])


async def _author(services: Services, conn: db.Connection, row: AutomationRow) -> Principal | None:
    """The author, if still active and still allowed to manage the workflow's automations."""
    found = await principal_service.get(
        dataclasses.replace(services, db=services.db.bound(conn)), row.author
    )
    if found is None or not found.active or not access.may_manage_automations(found, row.workflow):
        return None
    return found


async def do_all(
    services: Services,
    conn: db.Connection,
    row: AutomationRow,
    event: rules_decide.Event,
    todo: tuple[rules.Action, ...],
    start: int = 0,
) -> str:
    """Do ``todo[start:]`` as ``automation:<id>`` with the author's powers, each after
    checking the author may still manage the workflow, up to a delay node (the rest wait in
    ``automation_pending``, written in this transaction); ``act``, or ``stopped`` (flagged)
    when the author may not."""
    inside = dataclasses.replace(services, db=services.db.bound(conn))
    actor = rules_decide.actor_id(row.id)
    before = await store.last_line(conn, event.run_id)
    now = services.clock.now()
    author: Principal | None = None
    for i, action in enumerate(todo[start:], start):
        author = await _author(services, conn, row)
        if author is None:
            why = f"its author {row.author!r} may no longer manage {row.workflow!r} automations"
            await store.flag(conn, row.id, why, now, event.run_id)
            await lines.append_audit(
                conn,
                event.run_id,
                [AuditEntry("automation.stopped", now, actor, details={"why": why})],
            )
            break
        if action.verb == "delay":
            await _delay(inside, conn, row, event, action, i + 1)
            break
        if action.verb == "wait" and not await waited(conn, row, event, action, now, now):
            await store.wait_after_delay(
                conn,
                row.id,
                row.version,
                int(event.id),
                event.run_id,
                i + 1,
                recheck(action, now, now),
                now,
            )
            break
        await do(inside, conn, dataclasses.replace(author, id=actor), event, action, row.author)
    await store.stamp_lines(conn, event.run_id, actor, before, stamp_of(row, event))
    return "act" if author is not None else "stopped"


def stamp_of(row: AutomationRow, event: rules_decide.Event) -> dict[str, Any]:
    """What every line an automation's actions wrote carries: the automation, its version,
    the enrolling line and event, and the depth (the enrolling line's + 1)."""
    return {
        "automation": row.id,
        "automation_version": row.version,
        "enrolled_by": int(event.id),
        "enrolling_event": event.kind,
        timeline.DEPTH_DETAIL: event.depth + 1,
    }


#: How often a wait node looks at its condition again.
WAIT_POLL = timedelta(minutes=1)


def deadline(action: rules.Action, since: datetime) -> datetime:
    """When a wait node that started ``since`` stops waiting."""
    return since + timedelta(minutes=int(action.params["timeout_minutes"]))


def recheck(action: rules.Action, since: datetime, now: datetime) -> datetime:
    """When a wait node that started ``since`` looks again: a poll later, or its deadline."""
    return min(deadline(action, since), now + WAIT_POLL)


async def waited(
    conn: db.Connection,
    row: AutomationRow,
    event: rules_decide.Event,
    action: rules.Action,
    since: datetime,
    now: datetime,
) -> bool:
    """Whether a wait node is over (its condition holds, or its deadline passed), written as
    an ``automation.waited`` line saying which; False: it waits on."""
    if rules_decide.holds(action.params["until"], event):
        outcome = "held"
    elif now >= deadline(action, since):
        outcome = "timed_out"
    else:
        return False
    details = {"outcome": outcome, **stamp_of(row, event)}
    entry = AuditEntry("automation.waited", now, rules_decide.actor_id(row.id), details=details)
    await lines.append_audit(conn, event.run_id, [entry])
    return True


async def _delay(
    services: Services,
    conn: db.Connection,
    row: AutomationRow,
    event: rules_decide.Event,
    action: rules.Action,
    next_action: int,
) -> None:
    """The actions from ``next_action`` on wait: ``minutes`` of real time, or of working
    time on the workflow's calendar (``business``), as a delayed start counts them. A delay
    that cannot be counted (no calendar) stops the rest, saying why."""
    now = services.clock.now()
    kind: bu.Kind = "business" if action.params.get("business") else "real"
    budget = bu.Budget(kind, float(action.params["minutes"]), "minutes")
    try:
        definition = services.catalog.get(row.workflow)
        due = scheduling.start_instant(definition, services.calendars, now, at=None, after=budget)
    except errors.TaskflowError as refused:
        details = {"do": "delay", "why": refused.message}
        entry = AuditEntry(
            "automation.action_skipped", now, rules_decide.actor_id(row.id), details=details
        )
        await lines.append_audit(conn, event.run_id, [entry])
        return
    await store.wait_after_delay(
        conn, row.id, row.version, int(event.id), event.run_id, next_action, due, now
    )
    details = {"until": due.isoformat(), "minutes": action.params["minutes"], "kind": kind}
    entry = AuditEntry("automation.delayed", now, rules_decide.actor_id(row.id), details=details)
    await lines.append_audit(conn, event.run_id, [entry])


async def _slot_of(at: Doing, params: Mapping[str, Any], verb: str) -> tuple[str | None, str]:
    """The live slot an action acts on (its ``slot``, else the enrolling event's), or why
    there is none."""
    name = str(params.get("slot") or at.event.facts.get("slot") or "")
    slot_id = await store.live_slot(at.conn, at.event.run_id, name) if name else None
    return slot_id, (f"no live slot {name!r} to {verb}" if name else "no slot named")


async def _assign(at: Doing, params: Mapping[str, Any]) -> str | None:
    slot_id, why = await _slot_of(at, params, "assign")
    if slot_id is None:
        return why
    to = str(params["to"]).removeprefix("user:")
    await slots.assign(at.services, at.actor, slot_id, to, None, "automation")
    return None


async def _add_candidate(at: Doing, params: Mapping[str, Any]) -> str | None:
    """addCandidate's use case: ``to`` is ``user:<id>`` or ``role:<name>``; the author must
    be one who may widen the slot (its delegates, a lead granted it, an admin)."""
    slot_id, why = await _slot_of(at, params, "add a candidate to")
    if slot_id is None:
        return why
    kind, _, name = str(params["to"]).partition(":")
    if kind not in candidates.KINDS:
        return f"a candidate is added as user:<id> or role:<name>, not {params['to']!r}"
    await candidates.add_candidate(
        at.services,
        at.actor,
        slot_id,
        principal=name if kind == "user" else None,
        role=name if kind == "role" else None,
        reason=f"added by {at.actor.id}",
    )
    return None


async def _escalate(at: Doing, params: Mapping[str, Any]) -> str | None:
    """The timer batch's escalation of one slot (``escalation.escalate``), to ``to``."""
    slot_id, why = await _slot_of(at, params, "escalate")
    if slot_id is None:
        return why
    await escalation.escalate(
        at.services, at.actor, slot_id, str(params["to"]), f"escalated by {at.actor.id}"
    )
    return None


async def _raise_event(at: Doing, params: Mapping[str, Any]) -> str | None:
    """raiseEvent on the run, as its raisers may (the author's roles, re-checked)."""
    slot = params.get("slot")
    target = events.EventTarget(run_id=at.event.run_id, slot_name=str(slot) if slot else None)
    event = str(params["event"])
    payload = params.get("payload")
    await events.raise_event(at.services, at.actor, event=event, payload=payload, target=target)
    return None


async def _set_field(at: Doing, params: Mapping[str, Any]) -> str | None:
    """updateSubject with one field changed (an application's power: the author needs it)."""
    found = await store.subject(at.conn, at.event.subject_key)
    if found is None:
        return "the run's subject is gone"
    attributes = {**(found["attributes"] or {}), str(params["field"]): params["value"]}
    await runs.update_subject(
        at.services,
        at.actor,
        subject_type=found["type"],
        external_id=found["external_id"],
        attributes=attributes,
    )
    return None


async def _start_run(at: Doing, params: Mapping[str, Any]) -> str | None:
    """startRun of a workflow on the run's subject (an application's power), keyed by the
    automation and the enrolling line: a second start of the same is the same run."""
    found = await store.subject(at.conn, at.event.subject_key)
    if found is None:
        return "the run's subject is gone"
    await starting.start_run(
        at.services,
        at.actor,
        workflow=str(params["workflow"]),
        subject_type=found["type"],
        external_id=found["external_id"],
        attributes=found["attributes"] or {},
        idempotency_key=f"{at.actor.id}:line:{at.event.id}",
    )
    return None


async def _webhook(at: Doing, params: Mapping[str, Any]) -> str | None:
    """An ``automation.webhook`` event to a registered endpoint the author may manage,
    through the outbox: the delivery worker signs and sends it, with its address rules."""
    endpoint_id = webhook_events.local_id("WebhookEndpoint", str(params["endpoint"]))
    found = await webhook_store.get_endpoint(at.conn, endpoint_id)
    owner = dataclasses.replace(at.actor, id=at.author)
    if found is None or not access.may_manage_webhook(owner, found.created_by, found.workflows):
        return f"no webhook endpoint {params['endpoint']!r} the author may manage"
    if not found.enabled:
        return f"the webhook endpoint {params['endpoint']!r} is disabled"
    details = {
        "automation": at.actor.id.removeprefix("automation:"),
        "endpoint": found.id,
        "message": str(params.get("message", "")),
    }
    now = at.services.clock.now()
    await store.post_webhook(at.conn, at.event.run_id, at.actor.id, details, now, found.id)
    return None


async def _notify(at: Doing, params: Mapping[str, Any]) -> str | None:
    """A notification to everyone ``to`` names (``user:<id>``, ``role:<name>``,
    ``group:<name>``), through the notification outbox the mail worker sends, as a
    reminder's is (quiet hours aside: an automation says when it notifies)."""
    run = await run_rows.get_run(at.conn, at.event.run_id)
    if run is None:
        return "the run is gone"
    to = str(params["to"])
    notice = firing.Notice(au.Audience(frozenset({to})), str(params["message"]), who=to)
    now = at.services.clock.now()
    rows = await notices.outbox_rows(
        at.services, at.conn, run.view, None, [notice], "automation.notify", False, now
    )
    if not rows:
        return f"no one is {to!r}"
    await notifications.notify(at.conn, rows)
    details = {"to": to, "recipients": sorted(r.recipient for r in rows)}
    entry = AuditEntry("automation.notified", now, at.actor.id, details=details)
    await lines.append_audit(at.conn, at.event.run_id, [entry])
    return None


WORK: Mapping[str, Work] = {
    "assign": _assign,
    "add_candidate": _add_candidate,
    "escalate": _escalate,
    "raise_event": _raise_event,
    "set_field": _set_field,
    "start_run": _start_run,
    "webhook": _webhook,
    "notify": _notify,
}
