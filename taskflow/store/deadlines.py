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
import functools
import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from taskflow.core import clocks, deadlines, durations
from taskflow.core.definition import budgets as bu
from taskflow.core.runs.model import AuditEntry, SlotView
from taskflow.store import db, report_kept, runs, timeline, timer_rows

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
    return clocks.Clock(
        row["milestone"], budget, row["started_at"], _pauses(row["pauses"]), row["met_at"]
    )


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


#: Columns that read a just-written slot's clock ledgers and timer rows in the statement that
#: wrote it (``c`` is the slot row): carrying out its deadlines then needs no further read.
CONTEXT_COLUMNS = """
    (SELECT json_agg(json_build_array(k.milestone, k.budget_kind, k.budget_us, k.working_days,
                                      k.calendar, k.started_at, k.pauses, k.met_at)
                     ORDER BY k.milestone)
       FROM sla_clock k WHERE k.slot = c.id) AS ctx_clocks,
    (SELECT json_agg(json_build_array(t.id, t.key, t.kind, t.part, t.due_at, t.status, t.fired,
                                      t.planned_at))
       FROM timer t WHERE t.slot = c.id) AS ctx_timers
"""


@dataclass(frozen=True)
class SlotContext:
    """A slot as a statement wrote it, with its run, clock ledgers and timer rows."""

    slot: SlotView
    run: runs.RunRow
    timers: list[TimerRow]


def _instant(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


def slot_context(row: Any, run_prefix: str) -> SlotContext:
    """Read a row of slot columns, :func:`runs.run_columns` (``run_prefix``) and
    :data:`CONTEXT_COLUMNS`."""
    view = runs.slot_from(row)
    ledgers = []
    for milestone, kind, budget_us, working_days, calendar, started, pauses, met in (
        row["ctx_clocks"] or ()
    ):
        budget = bu.ResolvedBudget(
            kind=kind,
            duration=timedelta(microseconds=budget_us),
            calendar=calendar,
            working_days=working_days,
        )
        ledgers.append(
            clocks.Clock(milestone, budget, _parse(started), _pauses(pauses), _instant(met))
        )
    timers = [
        TimerRow(
            tid,
            key,
            view.run_id,
            view.id,
            kind,
            part,
            _parse(due),
            status,
            fired,
            planned_at=_instant(planned),
        )
        for tid, key, kind, part, due, status, fired, planned in (row["ctx_timers"] or ())
    ]
    if ledgers:
        view = dataclasses.replace(view, clocks=tuple(ledgers))
    return SlotContext(view, runs.run_from(row, run_prefix), timers)


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _pauses(stored: Sequence[Sequence[str | None]]) -> tuple[clocks.Pause, ...]:
    return tuple(clocks.Pause(_parse(str(a)), _instant(b)) for a, b in stored)


@dataclass(frozen=True)
class ClockRow:
    """A clock to write, with the derived instants kept beside the ledger for reports."""

    slot_id: str
    run_id: str
    clock: clocks.Clock
    due_at: datetime | None
    breached_at: datetime | None


def _pause_list(c: clocks.Clock) -> list[list[str | None]]:
    return [[p.start.isoformat(), p.end.isoformat() if p.end else None] for p in c.pauses]


async def save_clocks(conn: db.Connection, rows: Iterable[ClockRow], now: datetime) -> None:
    """Insert or replace clock ledgers (one row per slot and milestone)."""
    await DeadlineWrites(clocks=list(rows)).send(conn, now)


async def set_slot_due(
    conn: db.Connection, rows: Iterable[tuple[str, int, datetime | None]], now: datetime
) -> None:
    """Write each slot's nearest due instant (and visit: a held slot rejoins the run's visit)."""
    await DeadlineWrites(slot_due=list(rows)).send(conn, now)


# -- timers ------------------------------------------------------------------------------------


TimerRow = timer_rows.TimerRow
timer_from = timer_rows.timer_from
timer_columns = timer_rows.timer_columns
differences = timer_rows.differences
_TIMER_COLUMNS = timer_rows.TIMER_COLUMNS


@dataclass(frozen=True)
class TimerChanges:
    """What makes timer rows match what is wanted: ids to cancel, specs to arm or move."""

    cancel: list[int]
    arm: list[deadlines.TimerSpec]

    @classmethod
    def between(
        cls, existing: Sequence[TimerRow], wanted: Sequence[deadlines.TimerSpec]
    ) -> TimerChanges:
        cancel, arm = differences(existing, wanted)
        return cls([t.id for t in cancel], arm)


async def timers_for(
    conn: db.Connection, slot_ids: Sequence[str], run_id: str | None
) -> tuple[list[TimerRow], list[TimerRow]]:
    """(the timer rows of these slots, the run-level rows of ``run_id`` if given), one read."""
    found = await conn.fetch(
        f"SELECT {_TIMER_COLUMNS} FROM timer WHERE slot = ANY($1::uuid[]) "
        "OR (run = $2 AND slot IS NULL)",
        [uuid.UUID(s) for s in slot_ids],
        uuid.UUID(run_id) if run_id is not None else None,
    )
    rows = [timer_from(r) for r in found]
    return [t for t in rows if t.slot_id is not None], [t for t in rows if t.slot_id is None]


@dataclass
class DeadlineWrites:
    """Every write that carrying out a decision's deadlines makes, sent as ONE statement.

    Each part is a data-modifying CTE over arrays (``unnest``), so a claim's clock
    upsert, due instant, timeline lines and timer changes cost one round trip
    however many rows they touch. The parts touch different rows (cancelled timers
    are never the armed ones), which a single statement requires.
    """

    clocks: list[ClockRow] = field(default_factory=list)
    slot_due: list[tuple[str, int, datetime | None]] = field(default_factory=list)
    #: Time to pickup of live slots, written with their due instants (each is in ``slot_due``).
    pickups: list[report_kept.PickupRow] = field(default_factory=list)
    run_id: str | None = None
    audit: list[AuditEntry] = field(default_factory=list)
    timers: TimerChanges = field(default_factory=lambda: TimerChanges([], []))

    async def send(self, conn: db.Connection, now: datetime) -> None:
        args: list[Any] = [now]
        arg = functools.partial(db.placeholder, args)

        parts = []
        if self.clocks:
            parts.append(_clock_upsert(self.clocks, arg))  # w0: its rows feed the slot's copy
        clocks_cte = "w0" if self.clocks else None
        if self.slot_due:
            parts.append(report_kept.slot_update(self.slot_due, self.pickups, arg, clocks_cte))
        elif clocks_cte:
            parts.append(report_kept.clock_copy(clocks_cte))
        if self.audit:
            assert self.run_id is not None
            parts.append(timeline.audit_insert([(self.run_id, e) for e in self.audit], arg))
        if self.timers.cancel:
            parts.append(
                "UPDATE timer SET status = 'cancelled', updated_at = $1 "
                f"WHERE id = ANY({arg(self.timers.cancel)}::bigint[])"
            )
        if self.timers.arm:
            parts.append(_timer_arm(self.timers.arm, arg))
        if not parts:
            return
        ctes = ", ".join(f"w{i} AS ({part})" for i, part in enumerate(parts))
        # Delivered at commit; identical payloads in one transaction are folded into one.
        notify = f"pg_notify({arg(CHANNEL)}, '')" if self.timers.arm else "NULL"
        # $1 (now) is named here too: a statement whose parts do not use it must still type it.
        await conn.execute(f"WITH {ctes} SELECT $1::timestamptz, {notify}", *args)


def _clock_upsert(rows: Sequence[ClockRow], arg: Callable[[Any], str]) -> str:
    columns = [
        ("id", "uuid", [uuid.uuid4() for _ in rows]),
        ("slot", "uuid", [uuid.UUID(r.slot_id) for r in rows]),
        ("run", "uuid", [uuid.UUID(r.run_id) for r in rows]),
        ("milestone", "text", [r.clock.milestone for r in rows]),
        ("budget_kind", "text", [r.clock.budget.kind for r in rows]),
        ("budget_us", "bigint", [r.clock.budget.duration // durations.US for r in rows]),
        ("working_days", "float8", [r.clock.budget.working_days for r in rows]),
        ("calendar", "text", [r.clock.budget.calendar for r in rows]),
        ("started_at", "timestamptz", [r.clock.started_at for r in rows]),
        ("pauses", "text", [json.dumps(_pause_list(r.clock)) for r in rows]),
        ("met_at", "timestamptz", [r.clock.met_at for r in rows]),
        ("due_at", "timestamptz", [r.due_at for r in rows]),
        ("breached_at", "timestamptz", [r.breached_at for r in rows]),
    ]
    names = ", ".join(name for name, _, _ in columns)
    arrays = ", ".join(f"{arg(values)}::{kind}[]" for _, kind, values in columns)
    selected = ", ".join(f"{name}::jsonb" if name == "pauses" else name for name, _, _ in columns)
    return f"""
        INSERT INTO sla_clock ({names}, updated_at)
        SELECT {selected}, $1 FROM unnest({arrays}) AS c({names})
        ON CONFLICT (slot, milestone) DO UPDATE SET
            budget_kind = EXCLUDED.budget_kind, budget_us = EXCLUDED.budget_us,
            working_days = EXCLUDED.working_days, calendar = EXCLUDED.calendar,
            started_at = EXCLUDED.started_at, pauses = EXCLUDED.pauses, met_at = EXCLUDED.met_at,
            due_at = EXCLUDED.due_at,
            breached_at = COALESCE(sla_clock.breached_at, EXCLUDED.breached_at),
            updated_at = EXCLUDED.updated_at
        RETURNING slot, {report_kept.CLOCK_COLUMNS}"""


def _timer_arm(specs: Sequence[deadlines.TimerSpec], arg: Callable[[Any], str]) -> str:
    return f"""
        INSERT INTO timer (key, run, slot, kind, part, due_at, status, fired, updated_at)
        SELECT key, run, slot, kind, part, due_at, 'armed', 0, $1
        FROM unnest({arg([s.key for s in specs])}::text[],
                    {arg([uuid.UUID(s.run_id) for s in specs])}::uuid[],
                    {arg([uuid.UUID(s.slot_id) if s.slot_id else None for s in specs])}::uuid[],
                    {arg([s.kind for s in specs])}::text[],
                    {arg([s.ref for s in specs])}::text[],
                    {arg([s.due_at for s in specs])}::timestamptz[])
             AS t(key, run, slot, kind, part, due_at)
        ON CONFLICT (key) DO UPDATE SET due_at = EXCLUDED.due_at, status = 'armed',
                                        attempts = 0, planned_at = NULL,
                                        updated_at = EXCLUDED.updated_at"""


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
