"""The SLA report as one SQL statement: per-slot measures, then grouped aggregates.

Slots that ended carry their measures, stored when they ended
(``slot_measures.py``): those rows are read as stored. The rest (live slots,
and ended ones not measured yet) are measured on read by the same statement
(``measure_sql.py``: business and real time, pauses, clocks; what a live slot
keeps of its timeline and its time to pickup).
Both meet in a UNION ALL of narrow rows, then one GROUP BY with
``percentile_cont``. For periods, each slot's period is its number among the
periods' first instants (``core.reports.period_starts``, passed as an array),
and every period is crossed with every group seen so empty periods show as
zeros. Every number is computed on the database; no slot is loaded into
Python.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg

from taskflow.core.reports import reports
from taskflow.core.runs import model
from taskflow.core.slots.filters import SlotFilter
from taskflow.store.clocks.business_sql import business_us
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import BuildError, Statement, compose
from taskflow.store.reports import measure_sql
from taskflow.store.slots import queries


def _filters(f: reports.ReportFilter, args: list[Any]) -> str:
    """`` AND ...`` conditions of ``f`` on slot ``sl`` (the builder's fragments), their
    parameters appended to ``args``: the lists' slot filters, then the report's own holder
    (held or done by) and exact priority."""
    same = SlotFilter(
        workflow=f.workflow, state=f.state, name=f.slot, audience=f.audience, scope=f.scope
    )
    st = queries.slot_filters(Statement.over(args), same)
    if f.holder is not None:
        st.where("slot_held_or_done_by", f.holder)
    if f.priority is not None:
        st.where("slot_priority", f.priority)
    return st.conditions()


#: Group key -> the column of ``m`` it reads.
_KEY_COLUMNS = {
    reports.WORKFLOW: "workflow",
    reports.VERSION: "version",
    reports.STATE: "state",
    reports.SLOT: "name",
    reports.AUDIENCE: "team",
    reports.HOLDER: "holder",
    reports.PRIORITY: "priority",
}
#: Group key -> (SQL expression over the measured rows ``m``, SQL type).
KEYS = {
    reports.WORKFLOW: ("m.workflow", "text"),
    reports.VERSION: ("m.version", "int"),
    reports.STATE: ("m.state", "text"),
    reports.SLOT: ("m.name", "text"),
    reports.AUDIENCE: ("m.team", "text"),
    reports.HOLDER: ("m.holder", "text"),
    reports.PRIORITY: ("m.priority", "int"),
}


def teams(audience: str) -> str:
    """A LATERAL join (``au``) giving each role or group key of ``audience`` (a text[] column
    of the branch's rows) its own row: a slot open to two teams counts in both."""
    return (
        f"LEFT JOIN LATERAL (SELECT k AS key FROM unnest({audience}) k "
        "WHERE k LIKE 'role:%' OR k LIKE 'group:%') au ON true"
    )


#: Run before the statement, in its transaction. The day rows (calendar_days) are few and
#: probed once per slot instant; the planner, unsure of their count, picks merge joins that
#: rescan them, four times slower than hashing (bench/report.py).
#: The grouped sort of a 90-day report (tens of thousands of rows, four percentile arrays)
#: spilled to disk with the default 4 MB of work memory.
PLANNER = "SET LOCAL enable_mergejoin = off; SET LOCAL work_mem = '64MB'"
#: The statements of ``reports/report_sql.sql``: by grouping (none, keys, periods, both).
SQL = sql.statements("reports/report_sql")
#: The figures of a group (the file's ``aggregates`` piece, without its comment).
AGGREGATES = "\n".join(
    line for line in SQL["aggregates"].splitlines() if not line.lstrip().startswith("--")
)


_RUN_VERSION = "(SELECT r.definition_version FROM run r WHERE r.id = {})"
#: Slots whose measures were stored when they ended (``store/reports/slot_measures.py``).
ENDED = "sl.status IN (" + ", ".join(f"'{status}'" for status in sorted(model.ENDED)) + ")"
#: Its negation as the partial indexes write it (``status NOT IN``, so the planner sees that a
#: query's condition implies theirs).
NOT_ENDED = ENDED.replace(" IN (", " NOT IN (", 1)
_BREACHED = "coalesce(sl.breach_from <= $1, false)"
_BIGINT_NAMES = ("pickup_biz", "pickup_real", "done_biz", "done_real", "lead_us", "worked_us")
#: The columns the aggregate may read: on-read (``mc``) name -> the stored row's SQL. Only
#: those a report needs go through the UNION ALL and the grouping sort (narrow rows sort
#: faster), times as bigint (cheaper to sort than numeric).
_COLUMNS = {
    "workflow": "sl.workflow",
    # The version the slot's run is on now: read only when a report groups by it.
    "version": _RUN_VERSION.format("sl.run"),
    "state": "sl.state",
    "name": "sl.name",
    "priority": "sl.priority",
    "team": "au.key",
    "holder": "coalesce(sl.holder, sl.satisfied_by)",
    "opened_at": "sl.opened_at",
    "live": "false",
    "met": f"sl.clock_met AND NOT {_BREACHED}",
    "breached": _BREACHED,
    "at_risk_now": "false",
    "breached_now": "false",
    "pickup_biz": "sl.pickup_biz_us",
    "pickup_real": "sl.pickup_real_us",
    "done_biz": "sl.done_biz_us",
    "done_real": "sl.done_real_us",
    "lead_us": business_us(
        "NULL", "sl.opened_at", "least(coalesce(sl.satisfied_at, sl.cancelled_at, $1), $1)"
    ),
    "worked_us": "sl.worked_us",
}
_ALWAYS = ["live", "met", "breached", "at_risk_now", "breached_now", *_BIGINT_NAMES]


#: Where ended slots' stored measures are: live runs' slots, and pruned runs' (retention).
KEPT_IN = ("slot", "pruned_slot")


def union(names: list[str], stored: str) -> str:
    """Rows for the aggregate: measured on read (``mc``) and stored (``stored`` selects).

    A team key (``team``) is joined in each branch, on the branch's own audience
    column: on the slot table's, whose statistics show few distinct audiences, the
    planner caches the unnest per audience (Memoize) as it does for a plain query;
    over the union's output it knew nothing and unnested every row (bench/README.md).
    """
    special = {"team": "au.key AS team", "version": f"{_RUN_VERSION.format('mc.run')} AS version"}
    read = ", ".join(f"{n}::bigint" if n in _BIGINT_NAMES else special.get(n, n) for n in names)
    kept = ", ".join(_COLUMNS[n] for n in names)
    by_team = "team" in names
    read_from = f"mc {teams('mc.audience')}" if by_team else "mc"
    # Slots of runs pruned by retention keep these very columns in pruned_slot.
    kept_from = [f"{t} sl {teams('sl.audience')}" if by_team else f"{t} sl" for t in KEPT_IN]
    return f"SELECT {read} FROM {read_from}" + "".join(
        f" UNION ALL SELECT {kept} FROM {table} WHERE {stored}" for table in kept_from
    )


def statement(
    request: reports.ReportRequest,
    now: datetime,
    workflow_calendars: dict[str, str | None],
    day_us: dict[str, int],
    at_risk_left: float = reports.AT_RISK_LEFT,
) -> tuple[str, list[Any]]:
    """The report's SQL and its parameters.

    Slots that ended with stored measures are read as stored; the rest (live
    ones, and any ended before measures were stored) are measured on read.
    """
    args = measure_sql.base_args(
        now, request.start, request.end, workflow_calendars, day_us, at_risk_left
    )
    window = "sl.opened_at >= $2 AND sl.opened_at < $3"
    if request.milestone is None:
        milestone = None
        # The same condition as the partial index slot_unmeasured_opened_at.
        on_read = f"(sl.measured_clock IS NULL OR {NOT_ENDED})"
        stored = f"sl.measured_clock IS NOT NULL AND {ENDED}"
    else:
        args.append(request.milestone)
        milestone = f"${len(args)}"
        on_read = f"NOT coalesce({ENDED} AND sl.measured_clock = {milestone}, false)"
        stored = f"sl.measured_clock = {milestone} AND {ENDED}"
    where = _filters(request.filter, args)
    columns = [*_ALWAYS, *(_KEY_COLUMNS[k] for k in request.keys)]
    if request.by_period:
        columns.append("opened_at")
    m = union(columns, f"{window} AND {stored}{where}")
    measured = f"""{measure_sql.measured_ctes(milestone, f"{window} AND {on_read}{where}")},
    m AS ({m})"""
    bounds = ""
    if request.by_period:
        args.append(reports.period_starts(request))
        bounds = f"${len(args)}::timestamptz[]"
    return grouping(request.keys, measured=measured, bounds=bounds), args


def grouping(keys: tuple[str, ...], *, measured: str, bounds: str = "") -> str:
    """The report's statement for groupings ``keys`` (each one of :data:`KEYS`, the fixed
    list), by period when ``bounds`` (the periods' first instants' placeholder) is given,
    over the ``measured`` CTEs (ending in ``m``)."""
    unknown = [k for k in keys if k not in KEYS]
    if unknown:
        raise BuildError(f"groupings {unknown} are not among {sorted(KEYS)}.")
    names = [f"k_{k}" for k in keys]
    parts = {"measured": measured, "aggregates": AGGREGATES}
    if keys:
        first = 2 if bounds else 1  # by period, the period's number is the first key
        parts |= {
            "keys": ", ".join(f"{KEYS[k][0]} AS k_{k}" for k in keys),
            "positions": ", ".join(str(first + i) for i in range(len(keys))),
        }
    if bounds:
        parts["bounds"] = bounds
    if not bounds:
        if not keys:
            return compose(SQL["totals"], **parts)
        parts["key_order"] = ", ".join(f"{n} NULLS LAST" for n in names)
        return compose(SQL["grouped"], **parts)
    if not keys:
        return compose(SQL["periods"], **parts)
    parts |= {
        "key_names": ", ".join(names),
        "grid_keys": ", ".join(f"g.{n}" for n in names),
        "grid_order": ", ".join(f"g.{n} NULLS LAST" for n in names),
    }
    return compose(SQL["grouped_periods"], **parts)


#: The grouping keys a row may carry (``k_<key>``; absent when the report does not group by it).
_KEYS = ("workflow", "state", "slot", "audience", "holder", "priority", "version")


def _row(record: asyncpg.Record, zone: ZoneInfo) -> reports.ReportRow:
    """A report row: its keys, its period in ``zone``, its percentiles; the counts and sums
    are read by name."""
    period = record.get("k_period")
    keys: dict[str, Any] = {key: record.get(f"k_{key}") for key in _KEYS}
    return db.record_as(
        reports.ReportRow,
        record,
        period_start=period.astimezone(zone) if period is not None else None,
        pickup_business=reports.Percentiles.of(record["pickup_biz"]),
        pickup_real=reports.Percentiles.of(record["pickup_real"]),
        completion_business=reports.Percentiles.of(record["done_biz"]),
        completion_real=reports.Percentiles.of(record["done_real"]),
        **keys,
    )


async def report(
    conn: db.Connection,
    request: reports.ReportRequest,
    now: datetime,
    workflow_calendars: dict[str, str | None],
    day_us: dict[str, int],
    at_risk_left: float = reports.AT_RISK_LEFT,
) -> list[reports.ReportRow]:
    """Run the report's one statement; rows in period, then key order."""
    sql, args = statement(request, now, workflow_calendars, day_us, at_risk_left)
    await conn.execute(PLANNER)
    zone = ZoneInfo(request.zone)
    return [_row(r, zone) for r in await conn.fetch(sql, *args)]
