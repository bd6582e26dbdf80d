"""Clock ledgers and timer rows in PostgreSQL (the outbox is in ``notifications.py``).

Timers are rows keyed by what they stand for (see ``core/clocks/deadlines.py``): one
row per key, armed, re-armed in place and retired, so its firing count
survives pauses and recomputes. Workers take due rows with ``FOR UPDATE SKIP
LOCKED`` in due order; every decision's writes go through ``unit_of_work.py``;
every comparison with "now" uses the instant the caller passes (the worker's one
clock), never the database's ``now()``.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskflow.core.clocks import clocks
from taskflow.core.common import durations
from taskflow.core.definition import budgets as bu
from taskflow.core.runs.model import SlotView
from taskflow.store.clocks import timer_rows
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns
from taskflow.store.runs import runs

#: The channel a worker LISTENs on; armed timers NOTIFY it when they commit.
CHANNEL = "taskflow_timers"

#: The statements of ``clocks/deadlines.sql``, their column lists filled.
SQL = with_columns(
    sql.statements("clocks/deadlines"),
    timer_columns=timer_rows.TIMER_COLUMNS,
    slot_columns=runs.SLOT_COLUMNS,
)

# -- clocks ------------------------------------------------------------------------------------


def _budget(kind: Any, budget_us: int, working_days: float, calendar: str | None) -> Any:
    return bu.ResolvedBudget(
        kind=kind,
        duration=timedelta(microseconds=budget_us),
        calendar=calendar,
        working_days=working_days,
    )


def _clock_from(row: Any) -> clocks.Clock:
    budget = _budget(row["budget_kind"], row["budget_us"], row["working_days"], row["calendar"])
    return clocks.Clock(
        row["milestone"],
        budget,
        row["started_at"],
        _pauses(row["pauses"]),
        row["met_at"],
        _recomputes(row["recomputes"]),
    )


def recompute_list(clock: clocks.Clock) -> list[list[Any]]:
    """The clock's recomputes as stored (``sla_clock.recomputes``): ``[[at, policy, kind,
    budget_us, working_days, calendar], ...]``, oldest first."""
    return [
        [r.at.isoformat(), r.policy, b.kind, b.duration // durations.US, b.working_days, b.calendar]
        for r in clock.recomputes
        for b in [r.before]
    ]


def _recomputes(stored: Any) -> tuple[clocks.Recompute, ...]:
    rows: list[list[Any]] = json.loads(stored) if isinstance(stored, str) else stored or []
    return tuple(
        clocks.Recompute(_parse(at), policy, _budget(kind, us, days, cal))
        for at, policy, kind, us, days, cal in rows
    )


async def clocks_of(
    conn: db.Connection, slot_ids: Sequence[str]
) -> dict[str, tuple[clocks.Clock, ...]]:
    """The clocks of these slots, by slot id (assigned before finished)."""
    if not slot_ids:
        return {}
    rows = await conn.fetch(SQL["clocks_of"], [uuid.UUID(s) for s in slot_ids])
    found: dict[str, list[clocks.Clock]] = {}
    for row in rows:
        found.setdefault(str(row["slot"]), []).append(_clock_from(row))
    return {k: tuple(v) for k, v in found.items()}


@dataclass(frozen=True)
class ChainFacts:
    """What the calendar chain reads of a slot to name the link behind its clocks."""

    workflow: str
    version: int
    state: str
    name: str
    holder: str | None
    holder_calendar: str | None
    subject: Mapping[str, Any]
    #: The slot's audience keys (its teams are the ``role:`` and ``group:`` ones).
    audience: tuple[str, ...] = ()


async def chain_facts(conn: db.Connection, slot_ids: Sequence[str]) -> dict[str, ChainFacts]:
    """The chain's facts of these slots, by slot id (one read)."""
    rows = await conn.fetch(SQL["chain_facts"], [uuid.UUID(s) for s in slot_ids])
    return {
        str(r["slot"]): ChainFacts(
            r["workflow"],
            r["definition_version"],
            r["state"],
            r["name"],
            r["holder"],
            r["holder_calendar"],
            json.loads(r["attributes"]) if isinstance(r["attributes"], str) else r["attributes"],
            tuple(r["audience"] or ()),
        )
        for r in rows
    }


async def with_clocks(conn: db.Connection, views: Sequence[SlotView]) -> list[SlotView]:
    """The slots with their clock ledgers attached."""
    ledgers = await clocks_of(conn, [v.id for v in views])
    return [dataclasses.replace(v, clocks=ledgers[v.id]) if v.id in ledgers else v for v in views]


#: Columns that read a just-written slot's clock ledgers and timer rows in the statement that
#: wrote it (``c`` is the slot row): carrying out its deadlines then needs no further read.
CONTEXT_COLUMNS = "\n".join(
    line for line in SQL["context_columns"].splitlines() if not line.startswith("--")
)


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
    for milestone, kind, budget_us, working_days, calendar, started, pauses, met, redone in (
        row["ctx_clocks"] or ()
    ):
        budget = _budget(kind, budget_us, working_days, calendar)
        ledgers.append(
            clocks.Clock(
                milestone,
                budget,
                _parse(started),
                _pauses(pauses),
                _instant(met),
                _recomputes(redone),
            )
        )
    timers = [
        TimerRow(
            key,
            view.run_id,
            view.id,
            kind,
            part,
            _parse(due),
            id=tid,
            status=status,
            fired=fired,
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


# -- timers ------------------------------------------------------------------------------------


TimerRow = timer_rows.TimerRow
timer_from = timer_rows.timer_from
timer_columns = timer_rows.timer_columns


async def timers_for(
    conn: db.Connection, slot_ids: Sequence[str], run_id: str | None
) -> tuple[list[TimerRow], list[TimerRow]]:
    """(the timer rows of these slots, the run-level rows of ``run_id`` if given), one read."""
    found = await conn.fetch(
        SQL["timers_for"],
        [uuid.UUID(s) for s in slot_ids],
        uuid.UUID(run_id) if run_id is not None else None,
    )
    rows = [timer_from(r) for r in found]
    return [t for t in rows if t.slot_id is not None], [t for t in rows if t.slot_id is None]


async def next_due(conn: db.Connection, after: datetime) -> datetime | None:
    """The nearest armed due instant later than ``after`` (how long a worker may sleep)."""
    value: datetime | None = await conn.fetchval(SQL["next_due"], after)
    return value


async def slots_of_runs(conn: db.Connection, run_ids: Sequence[str]) -> dict[str, list[SlotView]]:
    """The slots of many runs with their clocks, by run (a worker's batch loads them at once)."""
    found = await conn.fetch(SQL["slots_of_runs"], [uuid.UUID(r) for r in run_ids])
    views = await with_clocks(conn, [runs.slot_from(r) for r in found])
    by_run: dict[str, list[SlotView]] = {r: [] for r in run_ids}
    for view in views:
        by_run[view.run_id].append(view)
    return by_run
