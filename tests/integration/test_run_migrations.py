"""Applying a declared run migration: stay keeps holders and clocks, to() closes and enters,
cancel ends; each run's timeline says so; a second apply changes nothing."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.slots import slots as slot_service
from taskflow.service.versions import deployments, run_migrations
from tests.integration import migrating

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent


claims = migrating.own_workflows("claims", HERE / "migration_workflows.py")


async def _start(services: container.Services, external_id: str) -> str:
    return await migrating.start_v1(services, "claim", external_id)


_rows = migrating.rows


async def _slot(services: container.Services, run_id: str, name: str) -> str:
    (row,) = await _rows(
        services, "SELECT id FROM slot WHERE run = $1 AND name = $2", uuid.UUID(run_id), name
    )
    return str(row["id"])


async def test_runs_parked_in_every_state_migrate_by_their_steps(
    claims: container.Services,
) -> None:
    fiona = await principal_service.get(claims, "fiona")
    assert fiona is not None
    staying, querying, archiving = [await _start(claims, f"C-{i}") for i in (1, 2, 3)]
    # Staying: claimed by Fiona, its clock running for an hour.
    await slot_service.claim(claims, fiona, await _slot(claims, staying, "review"), None)
    # The others reviewed into query and archived.
    for run_id, decision in ((querying, "query"), (archiving, "archive")):
        await slot_service.complete(
            claims, fiona, await _slot(claims, run_id, "review"),
            event=None, payload={"decision": decision}, expected_version=None,
        )  # fmt: skip
    claims.clock.advance(timedelta(hours=1))  # type: ignore[attr-defined]
    clocks_before = await _rows(
        claims,
        "SELECT c.* FROM sla_clock c JOIN slot s ON s.id = c.slot WHERE s.run = $1",
        uuid.UUID(staying),
    )

    plan = await deployments.migration_plan(claims, "claim", 2)
    assert [(x.state, x.runs, x.step.kind if x.step else None) for x in plan] == [
        ("archived", 1, "cancel"),
        ("query", 1, "to"),
        ("submitted", 1, "stay"),
    ]

    applied = await run_migrations.apply(claims, "claim", 2, batch=2)
    assert applied.by_kind == {"cancel": 1, "to": 1, "stay": 1}
    assert applied.batches == 2

    runs = {
        str(r["id"]): r
        for r in await _rows(claims, "SELECT id, definition_version, definition_digest, state, "
                             "status, visit FROM run")
    }  # fmt: skip
    v2 = claims.catalog.get("claim", 2)
    # Stay: on version 2, same state, the slot still held by Fiona, the clock ledger kept.
    assert (runs[staying]["definition_version"], runs[staying]["state"]) == (2, "submitted")
    assert runs[staying]["definition_digest"] == v2.digest
    (review,) = await _rows(
        claims, "SELECT status, holder FROM slot WHERE run = $1", uuid.UUID(staying)
    )
    assert review == {"status": "claimed", "holder": "fiona"}
    clocks_after = await _rows(
        claims,
        "SELECT c.* FROM sla_clock c JOIN slot s ON s.id = c.slot WHERE s.run = $1",
        uuid.UUID(staying),
    )
    assert clocks_after == clocks_before
    # Its reminder (half of the finished budget) is still armed, planned by version 2.
    reminders = await _rows(
        claims,
        "SELECT t.key, t.status FROM timer t WHERE t.run = $1 AND t.kind = 'reminder'",
        uuid.UUID(staying),
    )
    assert [r["status"] for r in reminders] == ["armed"]
    # To: the question's slot closed as migrated, the new state entered with a fresh clock.
    assert (runs[querying]["definition_version"], runs[querying]["state"]) == (2, "checked")
    slots = {
        r["name"]: r
        for r in await _rows(
            claims, "SELECT name, status, visit FROM slot WHERE run = $1", uuid.UUID(querying)
        )
    }
    assert slots["answer"]["status"] == "cancelled"
    assert slots["check"]["status"] == "open"
    assert slots["check"]["visit"] == runs[querying]["visit"]
    armed = await _rows(
        claims,
        "SELECT s.name FROM timer t JOIN slot s ON s.id = t.slot "
        "WHERE t.run = $1 AND t.status = 'armed'",
        uuid.UUID(querying),
    )
    assert {r["name"] for r in armed} <= {"check"}
    # Cancel: ended on its own version.
    assert (runs[archiving]["definition_version"], runs[archiving]["status"]) == (1, "cancelled")

    for run_id, step, to_state in (
        (staying, "stay", "submitted"),
        (querying, "to", "checked"),
        (archiving, "cancel", None),
    ):
        (line,) = await _rows(
            claims,
            "SELECT details FROM audit_event WHERE run = $1 AND kind = 'run.migrated'",
            uuid.UUID(run_id),
        )
        details = (
            line["details"] if isinstance(line["details"], dict) else json.loads(line["details"])
        )
        assert (details["step"], details["from_version"], details["to_state"]) == (
            step,
            1,
            to_state,
        )

    # Resumable and idempotent: nothing is left to do.
    again = await run_migrations.apply(claims, "claim", 2)
    assert again.by_kind == {}
    assert await deployments.migration_plan(claims, "claim", 2) == []
