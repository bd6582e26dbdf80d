"""What a principal may do on a run now: the verbs an agent's ``run`` tool lists.

Each verb is the use case's own rule asked on the rows as read (``core/slots/slots.available``
for the slot verbs, ``access.may_operate`` for the operator verbs), so the list never promises
what the call would refuse on the same versions.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskflow.core.access.principals import Principal
from taskflow.core.runs.statuses import RunStatus
from taskflow.core.slots import slots as core
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.service.slots import views
from taskflow.store.common import db
from taskflow.store.steps import steps as step_rows


@dataclass(frozen=True)
class Action:
    """One verb the principal may use now: on a slot, a step, or the run itself (both None)."""

    verb: str
    slot_id: str | None = None
    step_id: int | None = None
    #: The version to pass as expectedVersion: the slot's for slot verbs, else the run's.
    version: int = 0


async def available(services: Services, actor: Principal, run_id: str) -> list[Action]:
    """The verbs ``actor`` may use on the run now (NOT_FOUND when it may not read it)."""
    run, slots = await views.run_detail(services, actor, run_id)
    if run.view.status != RunStatus.ACTIVE:
        return []
    now = services.clock.now()
    keys = access.keys(actor)
    found = [
        Action(verb, slot.id, None, slot.version)
        for slot in sorted(slots, key=lambda s: s.id)
        if slot.live
        for verb in core.available(slot, actor.id, keys, now)
    ]
    if access.may_operate(actor, run.view.workflow):
        found += [Action(v, None, None, run.version) for v in ("pauseClocks", "resumeClocks")]
        async with services.db.connection() as conn:
            steps = await _steps(conn, run_id)
        found += [
            Action("retryStep", None, s.id, run.version)
            for s in steps
            if s.status == step_rows.PARKED
        ]
    return found


async def _steps(conn: db.Connection, run_id: str) -> list[step_rows.StepRecord]:
    return (await step_rows.of_runs(conn, [run_id]))[run_id]
