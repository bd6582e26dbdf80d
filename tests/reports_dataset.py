"""A hand-built set of slots whose SLA numbers are worked out by hand (tests/integration and api).

"Now" is the suite's T0, Tuesday 2026-12-01 09:00Z. London is on UTC in
November; uk-london works Mon-Fri 09:00-17:30; de-berlin 08:00-12:00 and
13:00-17:00 Berlin time (07:00-11:00, 12:00-16:00 UTC).

- S1 expense, opened Mon 23 16:00, claimed Tue 24 10:00 (frank), satisfied 12:00;
  finished clock 8h uk-london due Tue 15:30: met.
- S2 expense, opened Wed 25 09:00, claimed 09:30 (frank), released 10:00, claimed
  11:00 (fiona), satisfied Thu 26 09:00; finished clock 4h real due Wed 13:00: breached.
- S3 expense, opened Fri 27 17:00, still open; 1h uk-london due Mon 30 09:30: breached now.
- S4 expense, opened Mon 30 15:00, claimed 15:30 (frank), still held; 3h uk-london
  due Tue 1 Dec 09:30: at risk now (30 minutes of 3 hours left).
- S5 expense, opened Tue 24 09:00, completed from open Tue 24 14:00 (fiona); 8h
  uk-london, paused 10:00-12:00: met.
- S6 vendor, opened Wed 25 10:00, claimed 12:30 (olga), satisfied 15:00; no clock
  (its workflow's de-berlin calendar for business time).
- S0 expense, opened Fri 20 10:00: before the window.

S1 also has an assigned clock: 2h uk-london, due Tue 24 09:30, met at the
claim (10:00): breached.
"""

from __future__ import annotations

import importlib
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from taskflow.store.common import db

#: The upgrade's backfill: the slots' held facts from their timelines and their report clock, as the
#: write path keeps them (``core/slots/holding.py``, ``store/clocks/deadlines.py``); the report
#: reads them for live slots.
BACKFILL = importlib.import_module("migrations.taskflow_2026_12_01t06_23_33_000000").BACKFILL
H = 3600 * 1_000_000
EXPENSE, VENDOR = "expense-approval", "vendor-onboarding"
FROM = datetime(2026, 11, 23, tzinfo=UTC)
TO = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def at(day: int, hour: int, minute: int = 0) -> datetime:
    """An instant in late November 2026 (day 31+ means December)."""
    base = datetime(2026, 11, 1, tzinfo=UTC)
    return base + timedelta(days=day - 1, hours=hour, minutes=minute)


FINANCE = ["role:finance", "user:fiona"]
EMEA = ["role:finance", "group:emea"]
#: name: (workflow, state, slot, audience, priority, status, holder, satisfied_by, opened,
#: satisfied)
SLOTS: dict[str, tuple[Any, ...]] = {
    "S0": (
        EXPENSE,
        "submitted",
        "finance_review",
        FINANCE,
        2,
        "open",
        None,
        None,
        at(20, 10),
        None,
    ),
    "S1": (
        EXPENSE,
        "submitted",
        "finance_review",
        FINANCE,
        2,
        "satisfied",
        "frank",
        "frank",
        at(23, 16),
        at(24, 12),
    ),
    "S2": (
        EXPENSE,
        "submitted",
        "finance_review",
        FINANCE,
        2,
        "satisfied",
        "fiona",
        "fiona",
        at(25, 9),
        at(26, 9),
    ),
    "S3": (
        EXPENSE,
        "manager_approval",
        "manager_approval",
        EMEA,
        1,
        "open",
        None,
        None,
        at(27, 17),
        None,
    ),
    "S4": (
        EXPENSE,
        "manager_approval",
        "manager_approval",
        EMEA,
        3,
        "claimed",
        "frank",
        None,
        at(30, 15),
        None,
    ),
    "S5": (
        EXPENSE,
        "payment",
        "payment",
        FINANCE,
        3,
        "satisfied",
        None,
        "fiona",
        at(24, 9),
        at(24, 14),
    ),
    "S6": (
        VENDOR,
        "collecting",
        "legal_review",
        ["role:procurement"],
        3,
        "satisfied",
        "olga",
        "olga",
        at(25, 10),
        at(25, 15),
    ),
}
#: slot: [(kind, at, actor)]
MOVES: dict[str, list[tuple[str, datetime, str]]] = {
    "S1": [("slot.claimed", at(24, 10), "frank"), ("slot.satisfied", at(24, 12), "frank")],
    "S2": [
        ("slot.claimed", at(25, 9, 30), "frank"),
        ("slot.released", at(25, 10), "frank"),
        ("slot.claimed", at(25, 11), "fiona"),
        ("slot.satisfied", at(26, 9), "fiona"),
    ],
    "S4": [("slot.claimed", at(30, 15, 30), "frank")],
    "S5": [("slot.satisfied", at(24, 14), "fiona")],
    "S6": [("slot.claimed", at(25, 12, 30), "olga"), ("slot.satisfied", at(25, 15), "olga")],
}
#: slot: [(milestone, kind, budget µs, calendar, started, pauses, met, due)]
CLOCKS: dict[str, list[tuple[Any, ...]]] = {
    "S1": [
        ("finished", "business", 8 * H, "uk-london", at(23, 16), [], at(24, 12), at(24, 15, 30)),
        ("assigned", "business", 2 * H, "uk-london", at(23, 16), [], at(24, 10), at(24, 9, 30)),
    ],
    "S2": [("finished", "real", 4 * H, None, at(25, 9), [], at(26, 9), at(25, 13))],
    "S3": [("finished", "business", 1 * H, "uk-london", at(27, 17), [], None, at(30, 9, 30))],
    "S4": [("finished", "business", 3 * H, "uk-london", at(30, 15), [], None, at(31, 9, 30))],
    "S5": [
        (
            "finished",
            "business",
            8 * H,
            "uk-london",
            at(24, 9),
            [[at(24, 10).isoformat(), at(24, 12).isoformat()]],
            at(24, 14),
            at(25, 10, 30),
        )
    ],
}


async def load(conn: db.Connection) -> dict[str, str]:
    """Insert the data set; returns slot name -> slot id and run ids as ``run:<slot>``."""
    ids: dict[str, str] = {}
    for name, (
        workflow,
        state,
        slot,
        audience,
        priority,
        status,
        holder,
        by,
        opened,
        done,
    ) in SLOTS.items():
        subject, run, slot_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        await conn.execute(
            "INSERT INTO subject (id, type, external_id) VALUES ($1, 'thing', $2)", subject, name
        )
        await conn.execute(
            "INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state, "
            "status, started_at, state_entered_at) VALUES ($1, $2, 1, 'x', $3, $4, $5, $6, $6)",
            run,
            workflow,
            subject,
            state,
            "active" if done is None else "completed",
            opened,
        )
        await conn.execute(
            "INSERT INTO audit_event (run, kind, details, at) VALUES ($1, 'state.entered', $2, $3)",
            run,
            {"state": state},
            opened,
        )
        await conn.execute(
            "INSERT INTO slot (id, run, visit, state, name, waits_for, status, holder, audience, "
            "deny, delegates, delegates_deny, priority, workflow, opened_at, created_at, "
            "claimed_at, satisfied_at, satisfied_by) VALUES ($1, $2, 1, $3, $4, 'done', $5, $6, "
            "$7, '{}', '{}', '{}', $8, $9, $10, $10, $11, $12, $13)",
            slot_id,
            run,
            state,
            slot,
            status,
            holder,
            audience,
            priority,
            workflow,
            opened,
            next((t for k, t, _ in reversed(MOVES.get(name, [])) if k == "slot.claimed"), None)
            if status == "claimed" or holder
            else None,
            done,
            by,
        )
        for kind, when, actor in MOVES.get(name, []):
            await conn.execute(
                "INSERT INTO audit_event (run, slot, kind, actor, at) VALUES ($1, $2, $3, $4, $5)",
                run,
                slot_id,
                kind,
                actor,
                when,
            )
        for milestone, kind, budget, calendar, started, pauses, met, due in CLOCKS.get(name, []):
            await conn.execute(
                "INSERT INTO sla_clock (id, slot, run, milestone, budget_kind, budget_us, "
                "calendar, started_at, pauses, met_at, due_at) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                uuid.uuid4(),
                slot_id,
                run,
                milestone,
                kind,
                budget,
                calendar,
                started,
                json.loads(json.dumps(pauses)),
                met,
                due,
            )
        ids[name] = str(slot_id)
        ids[f"run:{name}"] = str(run)
    for sql in BACKFILL:
        await conn.execute(sql)
    return ids


MEASURES = (
    "measured_clock, pickup_biz_us, pickup_real_us, done_biz_us, done_real_us, worked_us, "
    "clock_met, breach_from, pickup_clock"
)


async def assert_stored_measures_agree(services: Any) -> int:
    """The measures the write path stored on ended slots (and on live ones at their pickup)
    equal the report's SQL for them.

    Clears them, lets ``measure_ended_slots`` (the report's on-read SQL) store them again,
    and compares; returns how many slots were compared.
    """
    from taskflow.service.reports import reports as report_service

    await assert_report_clocks_agree(services)
    # pickup_clock serves live slots (an ended one's stored pickup is in its measures).
    query = (
        f"SELECT id, {MEASURES.removesuffix(', pickup_clock')}, "
        "CASE WHEN status IN ('pending', 'open', 'claimed') THEN pickup_clock END AS kept "
        "FROM slot WHERE measured_clock IS NOT NULL OR pickup_clock IS NOT NULL ORDER BY id"
    )
    async with services.db.transaction() as conn:
        written = [dict(r) for r in await conn.fetch(query)]
        await conn.execute(f"UPDATE slot SET ({MEASURES}) = ({', '.join(['NULL'] * 9)})")
    assert await report_service.measure_ended_slots(services) == len(written)
    async with services.db.connection() as conn:
        assert [dict(r) for r in await conn.fetch(query)] == written
    return len(written)


_SLA = ("milestone", "calendar", "budget_us", "working_days", "pauses", "met_at", "due_at",
        "breached_at")  # fmt: skip


async def assert_report_clocks_agree(services: Any) -> None:
    """Every slot's copy of its report clock (``sla_*``: finished, else assigned) equals that
    clock's row, as the write path keeps it; a slot without clocks has none."""
    async with services.db.connection() as conn:
        rows = await conn.fetch(
            f"""SELECT s.id, {", ".join(f"s.sla_{c}" for c in _SLA)},
                       {", ".join(f"k.{c} AS k_{c}" for c in _SLA)}
                FROM slot s LEFT JOIN LATERAL (
                    SELECT * FROM sla_clock c WHERE c.slot = s.id
                    ORDER BY c.milestone DESC LIMIT 1) k ON true"""
        )
    assert rows
    for row in rows:
        assert [row[f"sla_{c}"] for c in _SLA] == [row[f"k_{c}"] for c in _SLA], row["id"]
