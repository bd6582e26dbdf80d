"""Set-up shared by the run-migration tests: services with only a test's own workflows,
a version-1 run started by the example app, and rows read as dicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taskflow.service.common import container
from tests.conftest import example_people, services_fixture
from tests.integration import starting


def own_workflows(name: str, workflows: Path) -> Any:
    """A services fixture named ``name`` with only ``workflows`` loaded and the example
    people without their grants (each test grants what it needs)."""
    return services_fixture(
        name,
        workflows,
        doc="Only this test's workflows; the example people without their grants.",
        people=example_people(powerless=True),
        examples=False,
    )


async def start_v1(services: container.Services, workflow: str, external_id: str) -> str:
    """A run of version 1 of ``workflow`` (whose subject type is its name too), started by
    the example app granted that workflow alone; the run's id."""
    run = await starting.app_starts(
        services, workflow, external_id, {}, subject_type=workflow, grant=True, version=1
    )
    return run.id


async def rows(services: container.Services, sql: str, *args: Any) -> list[dict[str, Any]]:
    """The rows of ``sql`` as dicts."""
    async with services.db.connection() as conn:
        return [dict(r) for r in await conn.fetch(sql, *args)]
