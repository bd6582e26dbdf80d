"""Managing automations: create (a draft), publish (a new version), pause, resume, list,
and simulate one over the recorded timeline.

Every verb asks ``core.access.may_manage_automations`` for the automation's workflow;
an automation of a workflow the caller does not lead answers NOT_FOUND (as if absent).
A document is validated before it is saved and again before it is published: a bad one
is refused with every problem (``problems``: JSON pointer, code, message) and nothing
is changed.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from taskflow import errors
from taskflow.core.access import access
from taskflow.core.access.principals import Principal
from taskflow.core.automations import document as rules
from taskflow.core.automations import simulate as sim
from taskflow.core.automations import timeline
from taskflow.core.common import refusals
from taskflow.service.common import retry as retries
from taskflow.service.common.container import Services
from taskflow.store.automations import automations as store
from taskflow.store.automations.automations import AutomationRow as AutomationRow
from taskflow.store.common import db

#: status -> the verbs that may leave it, and where each goes (``publish`` bumps the version).
MOVES = {
    "draft": {"publish": "published"},
    "published": {"publish": "published", "pause": "paused"},
    "paused": {"resume": "published", "publish": "published"},
}


def checked(document: Any) -> rules.Automation:
    """The rule, or AUTOMATION_INVALID carrying every problem (its message names each too, as
    the INVALID_INPUT it once was did)."""
    got = rules.read(document)
    if isinstance(got, rules.Automation):
        return got
    listed = "; ".join(f"{p.pointer or '/'}: {p.message}" for p in got)
    raise refusals.AutomationInvalid(
        f"The automation is not valid: {listed}.",
        field="document",
        problems=[{"pointer": p.pointer, "code": p.code, "message": p.message} for p in got],
    )


def _require(services: Services, actor: Principal, workflow: str) -> None:
    if workflow not in services.catalog.names():
        raise errors.NotFound(f"No workflow is called {workflow!r}.", field="workflow")
    if not access.may_manage_automations(actor, workflow):
        raise errors.Forbidden(
            f"Only leads granted {workflow!r} whole (and admins) manage its automations."
        )


def problems_of(document: Any) -> list[rules.Problem]:
    """Every problem of ``document`` (empty when it is a valid automation)."""
    got = rules.read(document)
    return [] if isinstance(got, rules.Automation) else got


@retries.retried("validate the automation")
async def validate(
    services: Services, actor: Principal, workflow: str, document: Any
) -> list[rules.Problem]:
    """Every problem of ``document`` as an automation of ``workflow``, saving nothing."""
    _require(services, actor, workflow)
    return problems_of(document)


@retries.retried("create the automation")
async def create(services: Services, actor: Principal, workflow: str, document: Any) -> str:
    """A new draft of ``workflow``; its id."""
    _require(services, actor, workflow)
    rule = checked(document)
    async with services.db.transaction() as conn:
        return await store.insert(
            conn,
            workflow=workflow,
            name=rule.name,
            document=document,
            author=actor.id,
            now=services.clock.now(),
        )


async def _mine(conn: db.Connection, actor: Principal, automation_id: str) -> AutomationRow:
    row = await store.get(conn, automation_id)
    if row is None or not access.may_manage_automations(actor, row.workflow):
        raise errors.NotFound(f"No automation has the id {automation_id!r}.", field="id")
    return row


@retries.retried("change the automation")
async def move(services: Services, actor: Principal, automation_id: str, verb: str) -> int:
    """``publish``, ``pause`` or ``resume``; the version the automation now has."""
    async with services.db.transaction() as conn:
        row = await _mine(conn, actor, automation_id)
        target = MOVES[row.status].get(verb)
        if target is None:
            raise errors.ValidationError(
                f"A {row.status} automation cannot be {verb}d.", field="id", status=row.status
            )
        if verb == "publish":
            checked(row.document)
        return await store.set_status(
            conn, automation_id, target, publish=verb == "publish", now=services.clock.now()
        )


@retries.retried("delete the automation")
async def delete(services: Services, actor: Principal, automation_id: str) -> str:
    """Delete an automation (any status) and its decisions; the timeline keeps what it did."""
    async with services.db.transaction() as conn:
        row = await _mine(conn, actor, automation_id)
        await store.delete(conn, row.id)
    return row.id


async def of_workflow(services: Services, actor: Principal, workflow: str) -> list[AutomationRow]:
    """The automations of ``workflow`` (FORBIDDEN unless the caller manages them)."""
    _require(services, actor, workflow)
    async with services.db.connection() as conn:
        return await store.of_workflow(conn, workflow)


@retries.retried("simulate the automation")
async def simulate(
    services: Services, actor: Principal, workflow: str, document: Any, days: int
) -> sim.Simulation:
    """What ``document`` would have done over the last ``days`` days of ``workflow``'s
    timeline (at most ``sim.MAX_DAYS`` days and ``sim.MAX_EVENTS`` events), doing nothing."""
    _require(services, actor, workflow)
    rule = checked(document)
    if not 1 <= days <= sim.MAX_DAYS:
        raise errors.ValidationError(f"days is 1 to {sim.MAX_DAYS}.", field="days")
    now = services.clock.now()
    kinds = [k for k, t in timeline.KIND_TO_TRIGGER.items() if t == rule.trigger]
    async with services.db.connection() as conn:
        lines = await store.recorded_lines(
            conn, workflow, now - timedelta(days=days), now, kinds, sim.MAX_EVENTS + 1
        )
    events = (timeline.event_of_line(line) for line in lines)
    return sim.simulate(rule, (e for e in events if e is not None))


async def get(services: Services, actor: Principal, automation_id: str) -> AutomationRow | None:
    """One automation the caller manages (None when absent or not theirs)."""
    async with services.db.connection() as conn:
        row = await store.get(conn, automation_id)
    if row is None or not access.may_manage_automations(actor, row.workflow):
        return None
    return row
