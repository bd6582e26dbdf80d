"""Detaching a child run: an operator cuts a running child loose from its parent.

A detached child runs on: its end resumes no one, and its parent's cancel no longer reaches
it (detach, then cancel the parent, and the child survives). A parent waiting for it stays
where it is, for its operator to move (goto). Who may: admins, and leads and managers
granted the *parent's* workflow (the wait is the parent's); the child's workflow needs no
grant, and the detach grants nothing on it (docs/composition.md, "Who may do what").
Lock order: the parent's run, the row, then the child's run.
"""

from __future__ import annotations

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.runs.model import AuditEntry
from taskflow.service.access import access
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import persist
from taskflow.store.common import locks
from taskflow.store.compose import children as rows
from taskflow.store.runs import runs as run_rows


@retry.retried("detach the child run")
async def detach_child(
    services: Services, actor: Principal, *, run_id: str, reason: str
) -> run_rows.RunRow:
    """Cut the running child ``run_id`` loose from its parent; answers the child as it is."""
    if not reason.strip():
        raise errors.ValidationError("Say why the child is detached (reason).", field="reason")
    access.operate_workflows(actor, "detach child runs")
    missing = errors.NotFound(
        f"No running child run has the id {run_id!r} in a workflow you operate: only a LIVE "
        "child (Run.children) is detached, by an operator of its parent's workflow.",
        field="runId",
    )
    async with services.db.transaction() as conn:
        links = await rows.parents_of(conn, [run_id])
        if not links:
            raise missing
        parent = await run_rows.get_run(conn, links[0].parent, lock=True)  # the parent first
        if parent is None or not access.may_operate(actor, parent.view.workflow):
            raise missing
        now = services.clock.now()
        found = await rows.detach(conn, run_id, now)
        if found is None:
            raise missing
        _, label = found
        await locks.lock_run(conn, run_id)  # then the child
        details = {"label": label, "child_run": run_id, "parent_run": parent.view.id}
        why = f"detached by {actor.id}: {reason}"
        await persist.audit(
            conn, parent.view.id, AuditEntry("child.detached", now, actor.id, None, why, details)
        )
        await persist.audit(
            conn, run_id, AuditEntry("run.detached", now, actor.id, None, why, details)
        )
        child = await run_rows.get_run(conn, run_id)
    assert child is not None
    return child
