"""The worker's automation lane: each published automation decides, once, on each timeline
line its trigger listens to, and acts in the same transaction as it records the decision.

A line is an event to every published automation of its run's workflow whose trigger it
maps to (``core/automations/timeline.py``) and that was published before it was written.
For one (automation, line) the worker locks the automation, asks whether it already
decided (a worker killed mid-way rolled back everything: actions and decision alike),
decides (``core/automations/decide.py``: trigger filters, depth, conditions, enrollment)
and, when acting, re-checks its author's grant before each action and does them as
``automation:<id>`` with the author's powers. The decision row (``automation_act``,
unique per automation and line) commits with the actions, so each action happens exactly
once. Every line the actions wrote is stamped with the automation, its version, the
enrolling line and the depth (the enrolling line's + 1), which the loop guard reads.

An automation whose author may no longer manage the workflow, or that met a loop, is
flagged (``attention``): it stops acting until it is published again.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from taskflow import errors
from taskflow.core.access import access
from taskflow.core.access.principals import Principal
from taskflow.core.automations import decide as rules_decide
from taskflow.core.automations import document as rules
from taskflow.core.automations import timeline
from taskflow.core.runs.model import AuditEntry
from taskflow.service.access import principals as principal_service
from taskflow.service.common import outage
from taskflow.service.common import retry as retries
from taskflow.service.common.container import Services
from taskflow.service.slots import slots
from taskflow.store.automations import automations as store
from taskflow.store.automations.automations import AutomationRow
from taskflow.store.common import db
from taskflow.store.runs import timeline as lines

log = logging.getLogger("taskflow.automations")

#: (automation, line) pairs taken per pass.
BATCH = 1000
_KINDS = list(timeline.KIND_TO_TRIGGER)
_TRIGGERS = [timeline.KIND_TO_TRIGGER[k] for k in _KINDS]
#: Actions that are timeline lines of their own (no use case behind them).
LINE_ACTIONS = {
    "comment": ("automation.comment", "text"),
    "add_label": ("automation.label", "label"),
}


async def run_due(services: Services, most: int = BATCH) -> int:
    """Decide on up to ``most`` lines automations have yet to see; how many were taken."""
    async with services.db.connection() as conn:
        taken = await store.due_lines(conn, _KINDS, _TRIGGERS, most)
        due = await _skip_plain(services, conn, taken)
    for line in due:
        try:
            await decide_line(services, line)
        except errors.Busy:
            continue  # rolled back whole; the next pass takes the line again
        except outage.DATABASE_DOWN:
            raise
        except Exception as exc:
            # A bug in an action must not hold every later line back: the automation is
            # flagged (its decision rolled back), the others go on.
            log.exception("automation %s failed on line %s", line["automation"], line["line_id"])
            async with services.db.transaction() as conn:
                why = f"an action failed ({type(exc).__name__}); see the worker's log"
                await store.flag(
                    conn, line["automation"], why, services.clock.now(), line["run_id"]
                )
    return len(taken)


async def _skip_plain(
    services: Services, conn: db.Connection, due: list[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """Record in one statement the lines each automation skips whatever it remembers (a
    filter or condition that does not hold: memory only ever adds skips); the others, to
    decide one by one under the automation's lock."""
    read: dict[str, rules.Automation | list[rules.Problem]] = {}
    skips: list[store.Skip] = []
    rest: list[Mapping[str, Any]] = []
    for line in due:
        rule = read.get(line["automation"])
        if rule is None:
            rule = read[line["automation"]] = rules.read(line["document"])
        event = timeline.event_of_line(line)
        if (
            isinstance(rule, rules.Automation)
            and event is not None
            and rules_decide.decide(rule, event, rules_decide.Enrollments()).outcome == "skip"
        ):
            subject = event.subject_key or event.run_id
            key = f"line:{line['line_id']}"
            skips.append(store.Skip(line["automation"], line["version"], key, subject, event.at))
            continue
        rest.append(line)
    if skips:
        await store.skip_many(conn, skips, services.clock.now())
    return rest


@retries.retried("act on an event")
async def decide_line(services: Services, line: Mapping[str, Any]) -> str:
    """Decide (and act) on one line for one automation; the outcome recorded (``done``:
    it was decided before, ``gone``: the automation no longer acts)."""
    now = services.clock.now()
    event = timeline.event_of_line(line)
    key = f"line:{line['line_id']}"
    async with services.db.transaction() as conn:
        row = await store.lock(conn, line["automation"])
        if row is None or row.status != "published" or row.attention or event is None:
            return "gone"
        if await store.decided(conn, row.id, key):
            return "done"
        rule = rules.read(row.document)
        if not isinstance(rule, rules.Automation):  # saved valid; blocks may since have gone
            await store.flag(conn, row.id, "its document is no longer valid", now, event.run_id)
            return "gone"
        subject = event.subject_key or event.run_id
        seen = rules_decide.Enrollments()
        last = await store.last_enrolled(conn, row.id, subject)
        if last is not None:
            seen.last[subject] = last
        decision = rules_decide.decide(rule, event, seen)
        outcome = decision.outcome
        if outcome == "loop":
            await store.flag(conn, row.id, f"stopped a loop: {decision.reason}", now, event.run_id)
        elif decision.acts:
            outcome = await _act(services, conn, row, event, decision.actions)
        await store.act_once(conn, row.id, row.version, key, outcome, now, subject, event.at)
        return outcome


async def _author(services: Services, conn: db.Connection, row: AutomationRow) -> Principal | None:
    """The author, if still active and still allowed to manage the workflow's automations."""
    found = await principal_service.get(
        dataclasses.replace(services, db=services.db.bound(conn)), row.author
    )
    if found is None or not found.active or not access.may_manage_automations(found, row.workflow):
        return None
    return found


async def _act(
    services: Services,
    conn: db.Connection,
    row: AutomationRow,
    event: rules_decide.Event,
    actions: tuple[rules.Action, ...],
) -> str:
    """Do ``actions`` as ``automation:<id>`` with the author's powers, each after checking
    the author may still manage the workflow; ``act``, or ``stopped`` (flagged) when not."""
    inside = dataclasses.replace(services, db=services.db.bound(conn))
    actor = rules_decide.actor_id(row.id)
    before = await store.last_line(conn, event.run_id)
    now = services.clock.now()
    for action in actions:
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
        await _do(inside, conn, dataclasses.replace(author, id=actor), event, action)
    stamp = {
        "automation": row.id,
        "automation_version": row.version,
        "enrolled_by": int(event.id),
        "enrolling_event": event.kind,
        timeline.DEPTH_DETAIL: event.depth + 1,
    }
    await store.stamp_lines(conn, event.run_id, actor, before, stamp)
    return "act" if author is not None else "stopped"


async def _do(
    services: Services,
    conn: db.Connection,
    actor: Principal,
    event: rules_decide.Event,
    action: rules.Action,
) -> None:
    """One action, through the use case a person's click would run where there is one."""
    now = services.clock.now()
    params = action.params
    if action.verb in LINE_ACTIONS:
        kind, name = LINE_ACTIONS[action.verb]
        entry = AuditEntry(kind, now, actor.id, details={name: params[name]})
        await lines.append_audit(conn, event.run_id, [entry])
        return
    if action.verb == "assign":
        name = str(params.get("slot") or event.facts.get("slot") or "")
        slot_id = await store.live_slot(conn, event.run_id, name) if name else None
        if slot_id is not None:
            to = str(params["to"]).removeprefix("user:")
            try:
                await slots.assign(services, actor, slot_id, to, None, "automation")
                return
            except errors.TaskflowError as refused:  # its savepoint rolled back: say why
                if isinstance(refused, errors.InternalError):
                    raise
                why = refused.message
        why = f"no live slot {name!r} to assign" if name else "no slot named"
    else:
        why = "not done by the worker yet"
    skipped = AuditEntry(
        "automation.action_skipped", now, actor.id, details={"do": action.verb, "why": why}
    )
    await lines.append_audit(conn, event.run_id, [skipped])
