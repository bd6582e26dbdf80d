"""Reading a run's automatic steps, and retrying a parked one (an operator verb).

``Run.steps`` shows every step of a run the caller may read, with its attempts
(errors included: whoever may read the run may see why its work failed).
``retryStep`` makes a parked step due again now, its policy's attempts counted
anew: leads and managers granted the workflow, and admins (``may_operate``).
"""

from __future__ import annotations

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.common.refusals import StepNotParked as StepNotParked
from taskflow.core.runs import refusals
from taskflow.core.runs.model import AuditEntry
from taskflow.service.access import access
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import persist
from taskflow.store.runs import runs as rows
from taskflow.store.steps import steps as store

#: A step with its attempts, as ``Run.steps`` shows it.
StepRecord = store.StepRecord


async def of_run(
    services: Services,
    actor: Principal,
    run_id: str,
    checked: access.RequestAccess | None = None,
) -> list[store.StepRecord]:
    """The run's steps, newest first, with their attempts; NOT_FOUND unless readable."""
    await (checked or access.RequestAccess(services, actor)).readable_run(run_id)
    async with services.db.connection() as conn:
        return (await store.of_runs(conn, [run_id]))[run_id]


async def get(services: Services, actor: Principal, step_id: int) -> store.StepRecord | None:
    """A step of a run the actor may read (None otherwise, as if it did not exist)."""
    async with services.db.connection() as conn:
        run_id = await store.run_of(conn, step_id)
    found = await access.unless_hidden(of_run(services, actor, run_id)) if run_id else None
    return next((s for s in found or () if s.id == step_id), None)


@retry.retried("retry the step")
async def retry_step(
    services: Services,
    actor: Principal,
    step_id: int,
    *,
    expected_version: int | None = None,
    reason: str | None = None,
) -> str:
    """Make a parked step due now, its attempts counted anew; returns its run's id.
    ``expected_version``: the run's version the caller saw (STALE_VERSION if it moved);
    ``reason``: the caller's words on the timeline line."""
    access.operate_workflows(actor, "retry steps")
    async with services.db.transaction() as conn:
        run_id = await store.run_of(conn, step_id)
        run = await rows.get_run(conn, run_id, lock=True) if run_id else None  # run first
        if run_id is None or run is None or not access.may_operate(actor, run.view.workflow):
            raise errors.NotFound(f"No step has the id {step_id}.", field="stepId")
        refusals.check_run_version(expected_version, run.version, run.view.state)
        found = await store.lock(conn, step_id)
        if found is None or found.status != store.PARKED:
            status = found.status if found is not None else "gone"
            raise StepNotParked(
                f"The step is {status}, not parked: only a step whose last attempt failed "
                "with no on_error route taking it can be retried.",
                status=status,
            )
        now = services.clock.now()
        await store.reopen(conn, step_id, now)
        line = AuditEntry(
            "step.reopened",
            now,
            actor.id,
            None,
            reason or "retried by an operator: due now, its attempts counted anew",
            {"step": step_id},
        )
        await persist.audit(conn, run_id, line)
    return run_id
