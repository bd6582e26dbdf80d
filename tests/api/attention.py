"""Shared by the needs-attention and bulk-operate tests: their services, tokens, runs, slots.

Import the fixture into a test module (``services = attention.services``).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.slots import slots as slot_service
from tests.conftest import example_people, services_fixture
from tests.integration import starting

HERE = Path(__file__).resolve().parent
SLA_WORKFLOWS = HERE.parent / "integration" / "sla_workflows.py"
OPERATIONS = HERE.parents[1] / "graphql" / "operations"
#: Tuesday 10:00 in London.
START = datetime(2026, 12, 1, 10, tzinfo=UTC)

services = services_fixture(
    "services",
    HERE / "attention_workflows.py",
    SLA_WORKFLOWS,
    doc="The examples, the attention and SLA workflows; leah a lead of triage and expenses.",
    # A lead of triage (and expenses), nothing else.
    people=example_people(
        app_everywhere=True,
        leah=[{"power": "lead", "workflows": ["expense-approval", "triage"]}],
    ),
)


def token(services: container.Services, who: str) -> str:
    """A bearer token of ``who`` at the services' now."""
    return services.staff_tokens.mint(who, services.clock.now())


async def start(
    services: container.Services, workflow: str, ref: str, attributes: dict[str, Any]
) -> str:
    """Start a run of ``workflow`` (a triage case, else a request) as the app: its id."""
    kind = "case" if workflow == "triage" else "request"
    return (await starting.app_starts(services, workflow, ref, attributes, subject_type=kind)).id


async def slot_of(services: container.Services, run_id: str, name: str) -> str:
    """The id of the latest visit's slot ``name`` of run ``run_id``."""
    async with services.db.connection() as conn:
        value = await conn.fetchval(
            "SELECT id FROM slot WHERE run = $1 AND name = $2 ORDER BY visit DESC LIMIT 1",
            uuid.UUID(run_id),
            name,
        )
    return str(value)


async def timeline(services: container.Services, run_id: str) -> list[tuple[str, str, str]]:
    """(kind, actor, reason) of each line of run ``run_id``'s timeline, oldest first."""
    async with services.db.connection() as conn:
        found = await conn.fetch(
            "SELECT kind, actor, reason FROM audit_event WHERE run = $1 ORDER BY id",
            uuid.UUID(run_id),
        )
    return [(r["kind"], r["actor"] or "", r["reason"] or "") for r in found]


async def unmatched(services: container.Services, ref: str) -> str:
    """A triage case ``ref`` whose check fiona completes with no size, so no route matches
    (ROUTE_UNMATCHED): its run's id."""
    run_id = await start(services, "triage", ref, {})
    fiona = await principal_service.get(services, "fiona")
    assert fiona is not None
    check = await slot_of(services, run_id, "check")
    await slot_service.complete(
        services, fiona, check, event=None, payload={}, expected_version=None
    )
    return run_id
