"""Starting the timer tests' workflows (``sla_workflows.py``) as the app would."""

from __future__ import annotations

import dataclasses
import uuid

from taskflow.core.principals import INTEGRATION, Grant
from taskflow.core.runs.model import RunView
from taskflow.service import container
from taskflow.service import principals as principal_service
from taskflow.service import runs as run_service


async def start_escalating(
    services: container.Services, external_id: str, workflow: str = "escalating"
) -> tuple[RunView, str]:
    """Start a run of ``workflow`` (``escalating``) for request ``external_id``: (the run, its
    one slot's id)."""
    app = await principal_service.get(services, "app")
    assert app is not None
    # The example app's grants name the example workflows; these are the tests' own.
    app = dataclasses.replace(app, powers=(Grant(INTEGRATION, workflows=(workflow,)),))
    started = await run_service.start_run(
        services,
        app,
        workflow=workflow,
        subject_type="request",
        external_id=external_id,
        attributes={},
        idempotency_key=None,
    )
    run = started.run.view
    async with services.db.connection() as conn:
        slot_id = await conn.fetchval("SELECT id FROM slot WHERE run = $1", uuid.UUID(run.id))
    return run, str(slot_id)
