"""What each action of an automation does, through the use case a person's (or an
application's) call would run: the worker calls :func:`do` for each action, as the
principal ``automation:<id>`` with its author's powers, inside the transaction of the
decision (each use case's own transaction is a savepoint of it).

A use case's refusal (the author may not raise that event, the slot is not open, the
subject's workflow is not granted...) rolls back only that action's savepoint and is
written as an ``automation.action_skipped`` line saying why; the other actions go on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.automations import decide as rules_decide
from taskflow.core.automations import document as rules
from taskflow.core.runs.model import AuditEntry
from taskflow.service.common.container import Services
from taskflow.service.runs import events, runs, starting
from taskflow.service.slots import slots
from taskflow.store.automations import automations as store
from taskflow.store.common import db
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


#: An action's work: None when done, else why it was not (a refusal raises instead).
Work = Callable[[Doing, Mapping[str, Any]], Awaitable[str | None]]


async def do(
    services: Services,
    conn: db.Connection,
    actor: Principal,
    event: rules_decide.Event,
    action: rules.Action,
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
            why = await work(Doing(services, conn, actor, event), action.params)
        except errors.TaskflowError as refused:  # its savepoint rolled back: say why
            if isinstance(refused, errors.InternalError):
                raise
            why = refused.message
    if why is not None:
        details = {"do": action.verb, "why": why}
        skipped = AuditEntry("automation.action_skipped", now, actor.id, details=details)
        await lines.append_audit(conn, event.run_id, [skipped])


async def _assign(at: Doing, params: Mapping[str, Any]) -> str | None:
    name = str(params.get("slot") or at.event.facts.get("slot") or "")
    slot_id = await store.live_slot(at.conn, at.event.run_id, name) if name else None
    if slot_id is None:
        return f"no live slot {name!r} to assign" if name else "no slot named"
    to = str(params["to"]).removeprefix("user:")
    await slots.assign(at.services, at.actor, slot_id, to, None, "automation")
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


WORK: Mapping[str, Work] = {
    "assign": _assign,
    "raise_event": _raise_event,
    "set_field": _set_field,
    "start_run": _start_run,
}
