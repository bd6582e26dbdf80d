"""The SLA report reads ended slots from the covering index alone (``slot_ended_report``)."""

from __future__ import annotations

import pytest

from taskflow.core.reports import reports
from taskflow.service.common.container import Services
from taskflow.service.reports import reports as report_service
from taskflow.store.reports import report_sql
from tests import reports_dataset as ds

pytestmark = pytest.mark.anyio

EVERY_FILTER = reports.ReportFilter(
    workflow=ds.EXPENSE,
    state="submitted",
    slot="approve",
    audience=("group:emea",),
    holder="fiona",
    priority=2,
)
REQUESTS = [
    reports.ReportRequest(ds.FROM, ds.TO),
    reports.ReportRequest(ds.FROM, ds.TO, milestone="assigned"),
    reports.ReportRequest(ds.FROM, ds.TO, reports.DIMENSIONS, None, "week", "Europe/London"),
    reports.ReportRequest(ds.FROM, ds.TO, (reports.AUDIENCE,), filter=EVERY_FILTER),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=["totals", "milestone", "every key", "filter"])
async def test_ended_slots_are_read_from_the_index_alone(
    services: Services, request_: reports.ReportRequest
) -> None:
    async with services.db.transaction() as conn:
        await ds.load(conn)
    # Stores the ended slots' measures, then vacuums: the visibility map marks the pages.
    assert await report_service.measure_ended_slots(services) == 5
    sql, args = report_sql.statement(
        request_,
        services.clock.now(),
        report_service.workflow_calendars(services),
        report_service.day_lengths(services),
    )
    async with services.db.transaction() as conn:
        # A handful of rows: left to itself the planner would scan the table. Forbid that to
        # learn whether the index can serve the stored branch, every column included.
        await conn.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
        plan = "\n".join(r[0] for r in await conn.fetch(f"EXPLAIN (ANALYZE) {sql}", *args))
    assert "Index Only Scan using slot_ended_report on slot" in plan, plan
    stored_branch = plan.split("Index Only Scan using slot_ended_report on slot", 1)[1]
    assert "Heap Fetches: 0" in stored_branch.split("->", 1)[0], plan
