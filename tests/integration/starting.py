"""Starting runs in the service tests as the app would (``sla_workflows.py`` and others), and
reading who people are and where a slot's finished clock stands."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import datetime
from typing import Any

from taskflow.core.access.principals import INTEGRATION, Grant, Principal
from taskflow.core.runs.model import RunView
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.runs import runs as run_service


async def app_starts(
    services: container.Services,
    workflow: str,
    external_id: str,
    attributes: dict[str, Any],
    *,
    subject_type: str = "request",
    grant: bool = False,
    version: int | None = None,
) -> RunView:
    """Start a run of ``workflow`` (its ``version``, default the latest) as the example app;
    ``grant`` gives the app that workflow (the example app's grants name the example
    workflows, not the tests' own)."""
    app = await principal_service.get(services, "app")
    assert app is not None
    if grant:
        app = dataclasses.replace(app, powers=(Grant(INTEGRATION, workflows=(workflow,)),))
    started = await run_service.start_run(
        services,
        app,
        workflow=workflow,
        version=version,
        subject_type=subject_type,
        external_id=external_id,
        attributes=attributes,
        idempotency_key=None,
    )
    return started.run.view


async def start_escalating(
    services: container.Services, external_id: str, workflow: str = "escalating"
) -> tuple[RunView, str]:
    """Start a run of ``workflow`` (``escalating``) for request ``external_id``: (the run, its
    one slot's id)."""
    run = await app_starts(services, workflow, external_id, {}, grant=True)
    async with services.db.connection() as conn:
        slot_id = await conn.fetchval("SELECT id FROM slot WHERE run = $1", uuid.UUID(run.id))
    return run, str(slot_id)


async def start_owned(services: container.Services, external_id: str, owner: str) -> str:
    """Start an ``escalating-to-owner`` run owned by ``owner``: the run's id."""
    run = await app_starts(services, "escalating-to-owner", external_id, {"owner": owner})
    return run.id


async def person(services: container.Services, login: str) -> Principal:
    """The principal ``login``, as stored."""
    found = await principal_service.get(services, login)
    assert found is not None
    return found


async def finished_clock(services: container.Services, slot_id: str) -> tuple[str, datetime]:
    """The calendar and due instant of the slot's finished clock, as stored."""
    async with services.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT calendar, due_at FROM sla_clock WHERE slot = $1 AND milestone = 'finished'",
            uuid.UUID(slot_id),
        )
    return row["calendar"], row["due_at"]


async def recomputed_line(services: container.Services, slot_id: str) -> Any:
    """The slot's one ``clock.recomputed`` timeline line (its reason and details)."""
    async with services.db.connection() as conn:
        return await conn.fetchrow(
            "SELECT reason, details FROM audit_event WHERE slot = $1 AND kind = 'clock.recomputed'",
            uuid.UUID(slot_id),
        )
