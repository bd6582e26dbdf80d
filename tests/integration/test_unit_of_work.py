"""One decision, carried out by a use case and by a worker's batch, writes the same rows.

Both go through the one planner (``core/common/unit_of_work.plan``) and the one writer
(``store/common/unit_of_work.write``): a use case per decision (``runs.decide`` ->
``persist.outcome``), the worker by merging its firings' writes into one
(``service/clocks/timer_batch.py``). Twin runs are brought to the same point at the same
instant; one is moved by the use case, its twin by the batch; the run, its slots, clock
ledgers, timers and timeline lines must come out the same (ids aside).
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest

from taskflow import clock
from taskflow.core.common import unit_of_work as uow
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine
from taskflow.core.runs.model import Outcome, SlotView
from taskflow.service.clocks import timer_batch
from taskflow.service.common import container
from taskflow.service.runs import ids, runs
from taskflow.store.common import locks
from taskflow.store.runs import runs as run_rows
from tests.api import workflows as w
from tests.integration.starting import app_starts

pytestmark = pytest.mark.anyio

REASON = "moved by the test"


async def _start(services: container.Services, ref: str) -> str:
    attributes = {**w.EXPENSE, "reference": ref}
    return (
        await app_starts(services, "expense-approval", ref, attributes, subject_type="expense")
    ).id


def _goto(definition: Definition, run: Any, slots: list[SlotView], now: datetime) -> Outcome:
    return engine.goto(
        definition,
        run.view,
        slots,
        target="manager_approval",
        reason=REASON,
        now=now,
        actor="ops",
        new_id=ids.new_id,
    )


async def _by_use_case(services: container.Services, run_id: str, now: datetime) -> None:
    async with services.db.transaction() as conn:
        await runs.decide(services, conn, run_id, _goto, now=now)


async def _by_worker_batch(services: container.Services, run_id: str, now: datetime) -> None:
    async with services.db.transaction() as conn:
        run = await run_rows.get_run(conn, run_id, lock=True)
        assert run is not None
        await locks.lock_live_slots(conn, [run_id])
        state = (await timer_batch.load(conn, {run_id: run}))[run_id]
        slots = list(state.slots.values())
        definition = runs.definition_for(services, run.view)
        ctx = uow.context(definition, services.calendars, slots)
        timer_batch.outcome(state, _goto(definition, run, slots, now), ctx, now)
        await timer_batch.flush(conn, [state], now)


async def _snapshot(services: container.Services, run_id: str, ref: str) -> Any:
    """The run's rows with its own and its slots' ids (and its reference) named by what
    they are."""
    key = uuid.UUID(run_id)
    async with services.db.connection() as conn:
        run = await conn.fetchrow(
            "SELECT state, status, visit, version, state_entered_at, ended_at, updated_at "
            "FROM run WHERE id = $1",
            key,
        )
        slots = await conn.fetch(
            "SELECT * FROM slot WHERE run = $1 ORDER BY visit, name, item_index", key
        )
        ledgers = await conn.fetch(
            "SELECT s.visit, s.name, k.milestone, k.budget_us, k.started_at, k.pauses, "
            "k.met_at, k.due_at, k.breached_at "
            "FROM sla_clock k JOIN slot s ON s.id = k.slot WHERE k.run = $1 "
            "ORDER BY s.visit, s.name, k.milestone",
            key,
        )
        timers = await conn.fetch(
            "SELECT key, kind, part, due_at, status, fired, attempts, planned_at "
            "FROM timer WHERE run = $1",
            key,
        )
        lines = await conn.fetch(
            "SELECT kind, actor, reason, details, at, slot FROM audit_event WHERE run = $1 "
            "ORDER BY id",
            key,
        )
    names = {str(s["id"]): f"<{s['visit']}:{s['name']}>" for s in slots}
    names[run_id] = "<run>"
    names[ref] = "<reference>"

    def plain(value: Any) -> Any:
        text = json.dumps(value, default=str)
        for found, name in names.items():
            text = text.replace(found, name)
        return json.loads(text)

    return plain(
        {
            "run": dict(run),
            "slots": [{k: v for k, v in dict(s).items() if k != "label"} for s in slots],
            "clocks": [dict(r) for r in ledgers],
            "timers": sorted((dict(t) for t in timers), key=lambda t: plain(t["key"])),
            "timeline": [dict(r) for r in lines],
        }
    )


async def test_a_use_case_and_a_worker_batch_write_the_same_rows_for_the_same_decision(
    services: container.Services, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    by_use_case = await _start(services, "EXP-A")
    by_batch = await _start(services, "EXP-B")
    frozen_clock.advance(timedelta(hours=2))
    now = frozen_clock.now()
    await _by_use_case(services, by_use_case, now)
    await _by_worker_batch(services, by_batch, now)
    one = await _snapshot(services, by_use_case, "EXP-A")
    other = await _snapshot(services, by_batch, "EXP-B")
    assert one == other
    # ... and the decision did write something of every kind.
    assert one["run"]["state"] == "manager_approval"
    assert one["run"]["version"] >= 2
    assert {s["status"] for s in one["slots"]} >= {"cancelled", "open"}
    assert any(s["measured_clock"] is not None for s in one["slots"])  # the ended slot
    assert {t["status"] for t in one["timers"]} >= {"cancelled", "armed"}
    assert {"clock.started"} <= {line["kind"] for line in one["timeline"]}
    assert [line["reason"] for line in one["timeline"]].count(REASON) >= 1
