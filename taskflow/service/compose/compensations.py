"""Resolving a saga's compensation that failed its last attempt (``resolveCompensation``,
docs/composition.md, "Sagas").

The failure parks the run in needs attention (``COMPENSATION_FAILED``); an operator of the
run's workflow then either has the worker **redo** it (one more attempt, a run of its own,
as a retry would start it) or **clears** it (the step was undone by hand). Either way the
failed row stays, marked resolved, as the record; its attention item goes, and the run's
timeline says who did what and why. Lock order: the run, then the row, so two operators
resolving at once settle to one answer (the second is told there is nothing to resolve).
"""

from __future__ import annotations

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.compose import compose
from taskflow.core.runs.model import AuditEntry
from taskflow.service.access import access
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import persist
from taskflow.store.compose import children as rows
from taskflow.store.runs import runs as run_rows

#: The resolutions: start the compensation again, or note it was undone by hand.
REDO = "redo"
CLEAR = "clear"


@retry.retried("resolve the failed compensation")
async def resolve_compensation(
    services: Services, actor: Principal, *, run_id: str, step: str, action: str, reason: str
) -> run_rows.RunRow:
    """Redo or clear the failed compensation of saga step ``step`` of run ``run_id``;
    answers the run as it is."""
    if action not in (REDO, CLEAR):
        raise errors.ValidationError(f"Unknown resolution {action!r}.", field="action")
    if not reason.strip():
        raise errors.ValidationError(
            "Say why the compensation is redone or cleared (reason).", field="reason"
        )
    access.operate_workflows(actor, "resolve failed compensations")
    missing = errors.NotFound(
        f"Run {run_id!r} has no compensation of step {step!r} that failed its last attempt "
        "and is unresolved, in a workflow you operate (needsAttention, COMPENSATION_FAILED, "
        "lists them).",
        field="step",
    )
    async with services.db.transaction() as conn:
        run = await run_rows.get_run(conn, run_id, lock=True)  # the run first
        if run is None or not access.may_operate(actor, run.view.workflow):
            raise missing
        row = await rows.failed_compensation(conn, run_id, step)
        if row is None:
            raise missing
        now = services.clock.now()
        await rows.resolve(conn, row.id, action, actor.id, now)
        details = compose.compensation_details(row.label, row.workflow, row.child, row.subject)
        attempt, _ = compose.attempts(row.subject)
        if action == REDO:
            await rows.again(conn, row.id, attempt + 1, now)
            kind = "run.compensation_redone"
            why = f"{actor.id} redoes the compensation of step {step!r} (attempt {attempt + 1})"
        else:
            kind = "run.compensation_cleared"
            why = f"{actor.id} cleared the failed compensation of step {step!r}"
        entry = AuditEntry(kind, now, actor.id, None, f"{why}: {reason}", details)
        await persist.audit(conn, run_id, entry)
        found = await run_rows.get_run(conn, run_id)
    assert found is not None
    return found
