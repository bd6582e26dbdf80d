"""The actions waiting after an automation's delay or wait node, done once it ended.

A delay node stores the rest of the actions (``automation_pending``: the automation, its
version, the enrolling line, the next action's index, when) in the transaction of the
decision (``actions.do_all``). Each pass of the lane takes those due, each in a
transaction of its own: the row locked (``SKIP LOCKED``: one worker each), the
automation locked, the rest of the actions done as the decision's were (the author
re-checked before each; another delay node stores the rest again), and the row deleted
with them. A worker killed mid-way rolled both back: the row is still there, and the
actions are done once. A wait node's row is looked at every ``actions.WAIT_POLL`` (its
condition read against the subject as it is then) until it holds or its timeout passes;
either way an ``automation.waited`` line says which, and the rest go on. An automation
paused, deleted, flagged or published again since (its actions may have changed) does
not resume: an ``automation.action_skipped`` line says so and the row goes.
"""

from __future__ import annotations

from taskflow import errors
from taskflow.core.automations import decide as rules_decide
from taskflow.core.automations import document as rules
from taskflow.core.automations import timeline
from taskflow.core.runs.model import AuditEntry
from taskflow.service.automations import actions
from taskflow.service.common import retry as retries
from taskflow.service.common.container import Services
from taskflow.store.automations import automations as store
from taskflow.store.runs import timeline as lines


async def run_due(services: Services, most: int) -> int:
    """Do up to ``most`` waiting actions whose delay ended; how many were taken."""
    async with services.db.connection() as conn:
        due = await store.pending_due(conn, services.clock.now(), most)
    for pending in due:
        try:
            await resume(services, pending)
        except errors.Busy:
            continue  # rolled back whole; a later pass takes it again
    return len(due)


@retries.retried("resume an automation after its delay")
async def resume(services: Services, pending_id: int) -> str:
    """The waiting actions of ``pending_id``, done (or dropped); the outcome."""
    now = services.clock.now()
    async with services.db.transaction() as conn:
        found = await store.take_pending(conn, pending_id)
        if found is None:
            return "gone"  # another worker has it, or it was done
        event = timeline.event_of_line(found)
        row = await store.lock(conn, found["automation"])
        rule = rules.read(row.document) if row is not None else None
        outcome = "dropped"
        if (
            row is not None
            and row.status == "published"
            and not row.attention
            and row.version == found["version"]
            and isinstance(rule, rules.Automation)
            and event is not None
        ):
            node = rule.actions[found["next_action"] - 1]
            since = found["created_at"]
            if node.verb == "wait" and not await actions.waited(conn, row, event, node, since, now):
                await store.recheck_pending(conn, pending_id, actions.recheck(node, since, now))
                return "waiting"
            outcome = await actions.do_all(
                services, conn, row, event, rule.actions, found["next_action"]
            )
        elif event is not None:
            why = "the automation was paused, flagged or published again before its delay ended"
            details = {"do": "delay", "why": why}
            actor = rules_decide.actor_id(found["automation"])
            entry = AuditEntry("automation.action_skipped", now, actor, details=details)
            await lines.append_audit(conn, event.run_id, [entry])
        await store.pending_done(conn, pending_id)
        return outcome
