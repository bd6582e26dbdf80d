"""Retention: runs that ended 100 days ago are pruned by a worker step; the SLA report over
their period answers the same numbers before and after.

Runs are scripted through the use cases on the frozen clock (started, claimed, completed
in time or late), then the clock moves on and ``retention.prune_due`` steps the worker's
pruning, as the worker's loop calls it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from taskflow import cli, clock, errors
from taskflow.config import config
from taskflow.core.access.principals import Grant, Principal
from taskflow.core.reports import reports
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.operate import retention
from taskflow.service.reports import metrics
from taskflow.service.reports import reports as report_service
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import slots as slot_service
from taskflow.worker import loop
from tests.conftest import TEST_SECRET, services_with

pytestmark = pytest.mark.anyio

WORKFLOWS = Path(__file__).resolve().parent / "retention_workflows.py"
#: A Tuesday, 10:00 in London, a little over 100 days before TODAY.
THEN = datetime(2026, 8, 18, 10, tzinfo=UTC)
TODAY = datetime(2026, 12, 1, 10, tzinfo=UTC)
MANAGER = Principal(id="max", display_name="Max", roles=("manager",), powers=(Grant("manager"),))


@pytest.fixture
async def services(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> AsyncIterator[container.Services]:
    async with services_with(database_url, settings, frozen_clock, WORKFLOWS) as built:
        yield built


async def _run(
    services: container.Services,
    frozen_clock: clock.FrozenClock,
    workflow: str,
    ref: str,
    at: datetime,
    done_after: timedelta,
) -> str:
    """A run started at ``at`` whose check fiona claims at once and completes after
    ``done_after`` (within two hours: met; later: breached)."""
    frozen_clock.set(at)
    app = await principal_service.get(services, "app")
    fiona = await principal_service.get(services, "fiona")
    assert app is not None
    assert fiona is not None
    started = await run_service.start_run(
        services,
        app,
        workflow=workflow,
        subject_type="request",
        external_id=ref,
        attributes={},
        idempotency_key=None,
    )
    run_id = started.run.view.id
    async with services.db.connection() as conn:
        slot_id = str(await conn.fetchval("SELECT id FROM slot WHERE run = $1", uuid.UUID(run_id)))
    frozen_clock.set(at + timedelta(minutes=10))
    await slot_service.claim(services, fiona, slot_id, None)
    frozen_clock.set(at + done_after)
    await slot_service.complete(
        services, fiona, slot_id, event=None, payload={}, expected_version=None
    )
    return run_id


async def _report(services: container.Services, *group_by: str) -> list[reports.ReportRow]:
    request = reports.ReportRequest(
        THEN - timedelta(days=1), THEN + timedelta(days=6), group_by, period="day"
    )
    return await report_service.sla_report(services, MANAGER, request)


async def _count(services: container.Services, sql: str, *args: object) -> int:
    async with services.db.connection() as conn:
        return int(await conn.fetchval(sql, *args))


async def _rows(services: container.Services, sql: str) -> list[dict[str, object]]:
    async with services.db.connection() as conn:
        return [dict(r) for r in await conn.fetch(sql)]


async def test_a_run_ended_100_days_ago_is_pruned_and_the_report_answers_the_same(
    services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    old = [
        await _run(services, frozen_clock, "kept-briefly", "R-1", THEN, timedelta(hours=1)),
        await _run(services, frozen_clock, "kept-briefly", "R-2", THEN, timedelta(hours=3)),
        await _run(
            services,
            frozen_clock,
            "kept-briefly",
            "R-3",
            THEN + timedelta(days=2),
            timedelta(minutes=30),
        ),
    ]
    kept = await _run(services, frozen_clock, "kept-for-ever", "F-1", THEN, timedelta(hours=4))
    recent = await _run(
        services, frozen_clock, "kept-briefly", "R-4", TODAY - timedelta(days=10), timedelta(1)
    )
    frozen_clock.set(TODAY)
    shapes = [(), ("workflow",), ("workflow", "slot", "holder"), ("period", "workflow")]
    before = {shape: await _report(services, *shape) for shape in shapes}
    (total,) = before[()]
    assert (total.opened, total.met, total.breached) == (4, 2, 2)
    counted = metrics.PRUNED.labels("kept-briefly")._value.get()

    assert retention.enabled(services)
    pruned = await retention.prune_due(services, batch=2)
    assert pruned == {"kept-briefly": 3}
    ids = [uuid.UUID(r) for r in old]
    assert await _count(services, "SELECT count(*) FROM run WHERE id = ANY($1)", ids) == 0
    for table in ("slot", "audit_event", "timer", "sla_clock", "notification", "magic_link"):
        assert await _count(services, f"SELECT count(*) FROM {table} WHERE run = ANY($1)", ids) == 0
    left = [uuid.UUID(kept), uuid.UUID(recent)]
    assert await _count(services, "SELECT count(*) FROM run WHERE id = ANY($1)", left) == 2
    assert await _count(services, "SELECT count(*) FROM subject WHERE external_id LIKE 'R-%'") == 1
    # The count on the record: two batches of at most two runs.
    async with services.db.connection() as conn:
        records = await conn.fetch(
            "SELECT workflow, retention_days, runs, slots, timeline FROM prune ORDER BY id"
        )
    assert [(r["workflow"], r["retention_days"], r["runs"], r["slots"]) for r in records] == [
        ("kept-briefly", 90, 2, 2),
        ("kept-briefly", 90, 1, 1),
    ]
    assert all(r["timeline"] > 0 for r in records)
    assert metrics.PRUNED.labels("kept-briefly")._value.get() == counted + 3
    assert b"taskflow_pruned_runs_total" in await metrics.render(services)

    after = {shape: await _report(services, *shape) for shape in shapes}
    assert after == before
    # A second step finds nothing more; the run ended 10 days ago stays until its day comes.
    assert await retention.prune_due(services) == {}
    frozen_clock.set(TODAY + timedelta(days=82))
    assert await retention.prune_due(services) == {"kept-briefly": 1}


async def test_a_month_whose_runs_are_all_past_retention_is_dropped_whole(
    services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    march = datetime(2031, 3, 10, 10, tzinfo=UTC)
    # March to May made; the first partitions (the rows up to the migration's month) hold
    # none and their months are past the 90 days: they go, as do the state spans' months
    # the migration made ahead (empty).
    made_ahead = [
        r["relname"]
        for r in await _rows(
            services,
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = 'state_span'::regclass AND c.relname LIKE 'state_span_p%' "
            "ORDER BY 1",
        )
    ]
    assert made_ahead  # the migration made this month's and the next ones
    assert await retention.keep_months(services, march) == [
        "audit_event_before",
        "state_span_before",
        *made_ahead,
    ]
    gone = await _run(services, frozen_clock, "kept-briefly", "R-5", march, timedelta(hours=1))
    kept = await _run(
        services, frozen_clock, "kept-for-ever", "F-5", march + timedelta(days=31), timedelta(1)
    )
    lines = "SELECT count(*) FROM audit_event WHERE run = $1"
    assert await _count(services, lines, uuid.UUID(gone)) > 0

    dropped = await retention.keep_months(services, datetime(2031, 9, 1, tzinfo=UTC))
    # March held only a run past its 90 days, May nothing; April holds a run kept for
    # ever: it stays, with its lines and its stays in its states.
    assert dropped == [
        "audit_event_p2031_03",
        "audit_event_p2031_05",
        "state_span_p2031_03",
        "state_span_p2031_05",
    ]
    assert await _count(services, lines, uuid.UUID(gone)) == 0
    assert await _count(services, lines, uuid.UUID(kept)) > 0
    # The run itself goes with the usual pruning, its measures kept.
    frozen_clock.set(datetime(2031, 9, 1, tzinfo=UTC))
    assert await retention.prune_due(services) == {"kept-briefly": 1}
    assert (
        await _count(services, "SELECT count(*) FROM pruned_slot WHERE run = $1", uuid.UUID(gone))
        == 1
    )


async def test_the_global_default_applies_and_a_running_worker_prunes(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> None:
    assert settings.retention_days is None  # off unless set
    async with services_with(database_url, settings, frozen_clock, WORKFLOWS) as services:
        run_id = await _run(
            services, frozen_clock, "kept-for-ever", "F-9", THEN, timedelta(minutes=30)
        )
        frozen_clock.set(TODAY)
        assert await retention.prune_due(services) == {}
    with_default = dataclasses.replace(settings, retention_days=100)
    async with services_with(database_url, with_default, frozen_clock, WORKFLOWS) as services:
        gone = "SELECT count(*) FROM run WHERE id = $1"
        async with loop.running(services, poll=0.05) as worker:
            async with asyncio.timeout(10):
                await worker.passes_done(1)  # the worker's first pass prunes
        assert await _count(services, gone, uuid.UUID(run_id)) == 0
        async with services.db.connection() as conn:
            record = await conn.fetchrow("SELECT workflow, retention_days, runs FROM prune")
        assert tuple(record) == ("kept-for-ever", 100, 1)


def test_the_default_setting_is_checked() -> None:
    base = {"TASKFLOW_SECRET_KEYS": TEST_SECRET, "TASKFLOW_DATA_DIR": "/tmp/x"}
    assert config.load(base).retention_days is None
    assert config.load({**base, "TASKFLOW_RETENTION_DAYS": "100"}).retention_days == 100
    for wrong in ("0", "-1", "90d", "100000"):
        with pytest.raises(errors.ConfigError, match="TASKFLOW_RETENTION_DAYS"):
            config.load({**base, "TASKFLOW_RETENTION_DAYS": wrong})


def test_taskflow_prune_counts_first_then_prunes(
    database_url: str,
    settings: config.Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def script() -> None:
        frozen = clock.FrozenClock(THEN)
        async with services_with(database_url, settings, frozen, WORKFLOWS) as services:
            await _run(services, frozen, "kept-briefly", "R-7", THEN, timedelta(minutes=20))

    asyncio.run(script())
    monkeypatch.setenv("TASKFLOW_DATABASE_URL", database_url)
    monkeypatch.setenv("TASKFLOW_SECRET_KEYS", TEST_SECRET)
    monkeypatch.setenv("TASKFLOW_WORKFLOWS", ",".join([*settings.workflows, str(WORKFLOWS)]))
    # The command reads the system clock: the run ended in August, over 90 days ago.
    assert cli.main(["prune", "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "kept-briefly: 1 ended runs older than 90 days would be pruned"
    ]
    assert cli.main(["prune"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "kept-briefly: 1 ended runs older than 90 days pruned"
    ]
    assert cli.main(["prune", "--dry-run"]) == 0
    assert "kept-briefly: 0 ended runs" in capsys.readouterr().out
