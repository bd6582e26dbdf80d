"""Clock ledgers and timer rows in PostgreSQL (the outbox is in ``notifications.py``).

Timers are rows keyed by what they stand for (see ``core/deadlines.py``): one
row per key, armed, re-armed in place and retired, so its firing count
survives pauses and recomputes. Workers take due rows with ``FOR UPDATE SKIP
LOCKED`` in due order and write a batch's firings set-based (``timer_batch.py``);
every comparison with "now" uses the instant the caller passes (the worker's one
clock), never the database's ``now()``.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskflow.core import clocks, deadlines
from taskflow.core.definition import budgets as bu
from taskflow.core.runs.model import SlotView
from taskflow.store import db, runs

#: The channel a worker LISTENs on; armed timers NOTIFY it when they commit.
CHANNEL = "taskflow_timers"

# -- clocks ------------------------------------------------------------------------------------


def _clock_from(row: Any) -> clocks.Clock:
    budget = bu.ResolvedBudget(
        kind=row["budget_kind"],
        duration=timedelta(microseconds=row["budget_us"]),
        calendar=row["calendar"],
        working_days=row["working_days"],
    )
    pauses = tuple(
        clocks.Pause(datetime.fromisoformat(a), datetime.fromisoformat(b) if b else None)
        for a, b in row["pauses"]
    )
    return clocks.Clock(row["milestone"], budget, row["started_at"], pauses, row["met_at"])


async def clocks_of(
    conn: db.Connection, slot_ids: Sequence[str]
) -> dict[str, tuple[clocks.Clock, ...]]:
    """The clocks of these slots, by slot id (assigned before finished)."""
    if not slot_ids:
        return {}
    rows = await conn.fetch(
        "SELECT slot, milestone, budget_kind, budget_us, working_days, calendar, started_at, "
        "pauses, met_at FROM sla_clock WHERE slot = ANY($1::uuid[]) ORDER BY slot, milestone",
        [uuid.UUID(s) for s in slot_ids],
    )
    found: dict[str, list[clocks.Clock]] = {}
    for row in rows:
        found.setdefault(str(row["slot"]), []).append(_clock_from(row))
    return {k: tuple(v) for k, v in found.items()}


async def with_clocks(conn: db.Connection, views: Sequence[SlotView]) -> list[SlotView]:
    """The slots with their clock ledgers attached."""
    ledgers = await clocks_of(conn, [v.id for v in views])
    return [dataclasses.replace(v, clocks=ledgers[v.id]) if v.id in ledgers else v for v in views]


@dataclass(frozen=True)
class ClockRow:
    """A clock to write, with the derived instants kept beside the ledger for reports."""

    slot_id: str
    run_id: str
    clock: clocks.Clock
    due_at: datetime | None
    breached_at: datetime | None


async def save_clocks(conn: db.Connection, rows: Iterable[ClockRow], now: datetime) -> None:
    """Insert or replace clock ledgers (one row per slot and milestone)."""
    args = []
    for r in rows:
        c = r.clock
        args.append(
            (
                uuid.uuid4(),
                uuid.UUID(r.slot_id),
                uuid.UUID(r.run_id),
                c.milestone,
                c.budget.kind,
                c.budget.duration // timedelta(microseconds=1),
                c.budget.working_days,
                c.budget.calendar,
                c.started_at,
                [[p.start.isoformat(), p.end.isoformat() if p.end else None] for p in c.pauses],
                c.met_at,
                r.due_at,
                r.breached_at,
                now,
            )
        )
    if not args:
        return
    await conn.executemany(
        """
        INSERT INTO sla_clock (id, slot, run, milestone, budget_kind, budget_us, working_days,
                               calendar, started_at, pauses, met_at, due_at, breached_at,
                               updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
        ON CONFLICT (slot, milestone) DO UPDATE SET
            budget_kind = EXCLUDED.budget_kind, budget_us = EXCLUDED.budget_us,
            working_days = EXCLUDED.working_days, calendar = EXCLUDED.calendar,
            started_at = EXCLUDED.started_at, pauses = EXCLUDED.pauses, met_at = EXCLUDED.met_at,
            due_at = EXCLUDED.due_at,
            breached_at = COALESCE(sla_clock.breached_at, EXCLUDED.breached_at),
            updated_at = EXCLUDED.updated_at
        """,
        args,
    )


async def breached_at_of(conn: db.Connection, slot_id: str) -> dict[str, datetime]:
    """When each of a slot's clocks was recorded breached (by the breach timer)."""
    rows = await conn.fetch(
        "SELECT milestone, breached_at FROM sla_clock WHERE slot = $1 AND breached_at IS NOT NULL",
        uuid.UUID(slot_id),
    )
    return {r["milestone"]: r["breached_at"] for r in rows}


async def set_slot_due(
    conn: db.Connection, rows: Iterable[tuple[str, int, datetime | None]]
) -> None:
    """Write each slot's nearest due instant (and visit: a held slot rejoins the run's visit)."""
    args = [(uuid.UUID(i), visit, due) for i, visit, due in rows]
    if args:
        await conn.executemany(
            "UPDATE slot SET visit = $2, due_at = $3 WHERE id = $1 "
            "AND (visit, due_at) IS DISTINCT FROM ($2, $3)",
            args,
        )


# -- timers ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimerRow:
    id: int
    key: str
    run_id: str
    slot_id: str | None
    kind: str
    ref: str
    due_at: datetime
    status: str
    fired: int


def _timer(row: Any) -> TimerRow:
    return TimerRow(
        id=row["id"],
        key=row["key"],
        run_id=str(row["run"]),
        slot_id=str(row["slot"]) if row["slot"] else None,
        kind=row["kind"],
        ref=row["part"],
        due_at=row["due_at"],
        status=row["status"],
        fired=row["fired"],
    )


_TIMER_COLUMNS = "id, key, run, slot, kind, part, due_at, status, fired"


async def timers_of(
    conn: db.Connection, *, slot_ids: Sequence[str] = (), run_id: str | None = None
) -> list[TimerRow]:
    """Timer rows of these slots, or the run-level rows (state timeouts) of a run."""
    if run_id is not None:
        rows = await conn.fetch(
            f"SELECT {_TIMER_COLUMNS} FROM timer WHERE run = $1 AND slot IS NULL",
            uuid.UUID(run_id),
        )
    else:
        rows = await conn.fetch(
            f"SELECT {_TIMER_COLUMNS} FROM timer WHERE slot = ANY($1::uuid[])",
            [uuid.UUID(s) for s in slot_ids],
        )
    return [_timer(r) for r in rows]


def differences(
    existing: Sequence[TimerRow], wanted: Sequence[deadlines.TimerSpec]
) -> tuple[list[TimerRow], list[deadlines.TimerSpec]]:
    """(armed rows to cancel, specs to arm or move) so that the rows match ``wanted``."""
    by_key = {t.key: t for t in existing}
    want = {s.key for s in wanted}
    cancel = [t for t in existing if t.status == "armed" and t.key not in want]
    arm = [
        s
        for s in wanted
        if s.key not in by_key
        or by_key[s.key].status != "armed"
        or by_key[s.key].due_at != s.due_at
    ]
    return cancel, arm


async def reconcile(
    conn: db.Connection,
    existing: Sequence[TimerRow],
    wanted: Sequence[deadlines.TimerSpec],
    now: datetime,
) -> None:
    """Make the rows match ``wanted``: arm new keys, move changed ones, cancel the rest."""
    cancel, arm = differences(existing, wanted)
    if cancel:
        await conn.execute(
            "UPDATE timer SET status = 'cancelled', updated_at = $2 WHERE id = ANY($1::bigint[])",
            [t.id for t in cancel],
            now,
        )
    if not arm:
        return
    await conn.executemany(
        """
        INSERT INTO timer (key, run, slot, kind, part, due_at, status, fired, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, 'armed', 0, $7)
        ON CONFLICT (key) DO UPDATE SET due_at = EXCLUDED.due_at, status = 'armed',
                                        updated_at = EXCLUDED.updated_at
        """,
        [
            (
                s.key,
                uuid.UUID(s.run_id),
                uuid.UUID(s.slot_id) if s.slot_id else None,
                s.kind,
                s.ref,
                s.due_at,
                now,
            )
            for s in arm
        ],
    )
    # Delivered at commit; identical payloads in one transaction are folded into one.
    await conn.execute("SELECT pg_notify($1, '')", CHANNEL)


async def next_due(conn: db.Connection, after: datetime) -> datetime | None:
    """The nearest armed due instant later than ``after`` (how long a worker may sleep)."""
    value: datetime | None = await conn.fetchval(
        "SELECT min(due_at) FROM timer WHERE status = 'armed' AND due_at > $1", after
    )
    return value


async def slots_of_runs(conn: db.Connection, run_ids: Sequence[str]) -> dict[str, list[SlotView]]:
    """The slots of many runs with their clocks, by run (a worker's batch loads them at once)."""
    found = await conn.fetch(
        f"SELECT {runs.SLOT_COLUMNS} FROM slot WHERE run = ANY($1::uuid[]) "
        "ORDER BY run, visit, name, item_index, id",
        [uuid.UUID(r) for r in run_ids],
    )
    views = await with_clocks(conn, [runs.slot_from(r) for r in found])
    by_run: dict[str, list[SlotView]] = {r: [] for r in run_ids}
    for view in views:
        by_run[view.run_id].append(view)
    return by_run
