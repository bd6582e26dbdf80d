"""A stay that renames the state and a slot keeps the slot row, its holder and its clock
ledgers, restarts the clock it declares, opens the slot the state adds; the run then goes
on by the new version's rules."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.slots import slots as slot_service
from taskflow.service.versions import run_migrations
from tests.conftest import T0
from tests.integration import migrating

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent


desk = migrating.own_workflows("desk", HERE / "rename_workflows.py")


_rows = migrating.rows


async def _start(services: container.Services, external_id: str) -> str:
    return await migrating.start_v1(services, "desk", external_id)


CLOCKS = (
    "SELECT s.name, c.milestone, c.started_at, c.budget_us, c.met_at FROM sla_clock c "
    "JOIN slot s ON s.id = c.slot WHERE c.run = $1 ORDER BY s.name, c.milestone"
)


async def test_a_renamed_state_and_slot_keep_holder_and_ledgers_and_restart_what_is_declared(
    desk: container.Services,
) -> None:
    fiona = await principal_service.get(desk, "fiona")
    assert fiona is not None
    held, waiting = await _start(desk, "D-1"), await _start(desk, "D-2")
    (look,) = await _rows(desk, "SELECT id FROM slot WHERE run = $1", uuid.UUID(held))
    await slot_service.claim(desk, fiona, str(look["id"]), None)
    desk.clock.advance(timedelta(hours=1))  # type: ignore[attr-defined]
    before = {r: await _rows(desk, CLOCKS, uuid.UUID(r)) for r in (held, waiting)}
    # An event kept for the slot by its old name (as a buffering event is) follows the rename.
    async with desk.db.connection() as conn:
        await conn.execute(
            "INSERT INTO event_buffer (run, event, payload, slot_name, actor, arrived_at, "
            "expires_at) VALUES ($1, 'looked', '{}', 'look', 'app', $2, $3)",
            uuid.UUID(waiting),
            T0,
            T0 + timedelta(days=1),
        )

    applied = await run_migrations.apply(desk, "desk", 2)
    assert applied.by_kind == {"stay": 2}
    now = T0 + timedelta(hours=1)

    for run_id, holder, status in ((held, "fiona", "claimed"), (waiting, None, "open")):
        (run,) = await _rows(
            desk, "SELECT definition_version, state, visit FROM run WHERE id = $1",
            uuid.UUID(run_id),
        )  # fmt: skip
        assert (run["definition_version"], run["state"], run["visit"]) == (2, "intake", 1)
        slots = await _rows(
            desk,
            "SELECT id, state, name, status, holder, label, waits_for FROM slot "
            "WHERE run = $1 ORDER BY name",
            uuid.UUID(run_id),
        )
        assert [(s["name"], s["state"], s["status"], s["holder"]) for s in slots] == [
            ("assess", "intake", status, holder),
            ("second_look", "intake", "open", None),
        ]
        assert slots[0]["label"] == "Assess the request"
        assert slots[0]["waits_for"] == "assess"
        after = await _rows(desk, CLOCKS, uuid.UUID(run_id))
        old = {c["milestone"]: c for c in before[run_id]}
        new = {c["milestone"]: c for c in after if c["name"] == "assess"}
        # The assigned clock is kept as it was (met for Fiona's, still running for the other).
        assert {k: v for k, v in new["assigned"].items() if k != "name"} == {
            k: v for k, v in old["assigned"].items() if k != "name"
        }
        # The finished clock restarted now, on version 2's 16 hours.
        assert new["finished"]["started_at"] == now
        assert new["finished"]["budget_us"] == 16 * 3600 * 1_000_000
        assert new["finished"]["met_at"] is None
        lines = await _rows(
            desk,
            "SELECT kind, details FROM audit_event WHERE run = $1 AND at = $2 ORDER BY id",
            uuid.UUID(run_id),
            now,
        )
        kinds = [line["kind"] for line in lines]
        assert {"run.migrated", "slot.renamed", "clock.restarted", "slot.opened"} <= set(kinds)
        renamed = next(line for line in lines if line["kind"] == "slot.renamed")
        details = renamed["details"]
        details = details if isinstance(details, dict) else json.loads(details)
        assert (details["previous"], details["slot"]) == ("look", "assess")
    (kept,) = await _rows(desk, "SELECT slot_name FROM event_buffer")
    assert kept["slot_name"] == "assess"
    # Fiona's reminder (half of the restarted finished budget) is armed on the kept slot.
    armed = await _rows(
        desk,
        "SELECT s.name, t.kind, t.due_at FROM timer t JOIN slot s ON s.id = t.slot "
        "WHERE t.run = $1 AND t.status = 'armed' ORDER BY s.name, t.kind",
        uuid.UUID(held),
    )
    assert [(t["name"], t["kind"]) for t in armed] == [
        ("assess", "at_risk"),
        ("assess", "breach"),
        ("assess", "reminder"),
    ]
    assert all(t["due_at"] > now for t in armed)

    # The run goes on by version 2's rules: both slots done, it ends.
    slots = await _rows(desk, "SELECT id FROM slot WHERE run = $1", uuid.UUID(held))
    for s in slots:
        await slot_service.complete(
            desk, fiona, str(s["id"]), event=None, payload={}, expected_version=None
        )
    (run,) = await _rows(desk, "SELECT state, status FROM run WHERE id = $1", uuid.UUID(held))
    assert (run["state"], run["status"]) == ("done", "completed")
