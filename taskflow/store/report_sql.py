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

from taskflow.core import reports
from taskflow.core.runs import model
from taskflow.store import db, measure_sql, queries
from taskflow.store.business_sql import business_us
from taskflow.store.sql_builder import Statement


def _filters(f: reports.ReportFilter, args: list[Any]) -> str:
    """`` AND ...`` conditions of ``f`` on slot ``sl`` (the builder's fragments), their
    parameters appended to ``args``."""
    st = Statement.over(args)
    for name, value in (
        ("slot_workflow", f.workflow),
        ("slot_state", f.state),
        ("slot_name", f.slot),
    ):
        if value is not None:
            st.where(name, value)
    if f.audience:
        st.where("slot_audience_any", list(f.audience))
    if f.holder is not None:
        st.where("slot_held_or_done_by", f.holder)
    if f.priority is not None:
        st.where("slot_priority", f.priority)
    return queries.scope(st, f.scope).conditions()


#: Group key -> the column of ``m`` it reads.
_KEY_COLUMNS = {
    reports.WORKFLOW: "workflow",
    reports.STATE: "state",
    reports.SLOT: "name",
    reports.AUDIENCE: "team",
    reports.HOLDER: "holder",
    reports.PRIORITY: "priority",
}
#: Group key -> (SQL expression over the measured rows ``m``, SQL type).
KEYS = {
    reports.WORKFLOW: ("m.workflow", "text"),
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


_PCT = "percentile_cont(ARRAY[0.5, 0.9, 0.95]) WITHIN GROUP (ORDER BY {})"
AGGREGATES = f"""
    count(*) AS opened,
    count(*) FILTER (WHERE m.met) AS met,
    count(*) FILTER (WHERE m.breached) AS breached,
    count(*) FILTER (WHERE m.live) AS still_open,
    count(*) FILTER (WHERE m.at_risk_now) AS at_risk_now,
    count(*) FILTER (WHERE m.breached_now) AS breached_now,
    {_PCT.format("m.pickup_biz")} AS pickup_biz,
    {_PCT.format("m.pickup_real")} AS pickup_real,
    {_PCT.format("m.done_biz")} AS done_biz,
    {_PCT.format("m.done_real")} AS done_real,
    coalesce(sum(m.lead_us), 0)::bigint AS lead_us,
    coalesce(sum(m.worked_us), 0)::bigint AS worked_us"""
#: Run before the statement, in its transaction. The day rows (calendar_days) are few and
#: probed once per slot instant; the planner, unsure of their count, picks merge joins that
#: rescan them, four times slower than hashing (bench/report.py).
#: The grouped sort of a 90-day report (tens of thousands of rows, four percentile arrays)
#: spilled to disk with the default 4 MB of work memory.
PLANNER = "SET LOCAL enable_mergejoin = off; SET LOCAL work_mem = '64MB'"
_PERCENTILE_NAMES = ("pickup_biz", "pickup_real", "done_biz", "done_real")
_COUNT_NAMES = ("opened", "met", "breached", "still_open", "at_risk_now", "breached_now")
_AGG_NAMES = (*_COUNT_NAMES, *_PERCENTILE_NAMES, "lead_us", "worked_us")


#: Slots whose measures were stored when they ended (``store/slot_measures.py``).
ENDED = "sl.status IN (" + ", ".join(f"'{status}'" for status in sorted(model.ENDED)) + ")"
_BREACHED = "coalesce(sl.breach_from <= $1, false)"
_BIGINT_NAMES = ("pickup_biz", "pickup_real", "done_biz", "done_real", "lead_us", "worked_us")
#: The columns the aggregate may read: on-read (``mc``) name -> the stored row's SQL. Only
#: those a report needs go through the UNION ALL and the grouping sort (narrow rows sort
#: faster), times as bigint (cheaper to sort than numeric).
_COLUMNS = {
    "workflow": "sl.workflow",
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


def union(names: list[str], stored: str) -> str:
    """Rows for the aggregate: measured on read (``mc``) and stored (``stored`` selects).

    A team key (``team``) is joined in each branch, on the branch's own audience
    column: on the slot table's, whose statistics show few distinct audiences, the
    planner caches the unnest per audience (Memoize) as it does for a plain query;
    over the union's output it knew nothing and unnested every row (bench/README.md).
    """
    read = ", ".join(
        f"{n}::bigint" if n in _BIGINT_NAMES else "au.key AS team" if n == "team" else n
        for n in names
    )
    kept = ", ".join(_COLUMNS[n] for n in names)
    by_team = "team" in names
    read_from = f"mc {teams('mc.audience')}" if by_team else "mc"
    kept_from = f"slot sl {teams('sl.audience')}" if by_team else "slot sl"
    return f"SELECT {read} FROM {read_from} UNION ALL SELECT {kept} FROM {kept_from} WHERE {stored}"


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
        on_read = "(sl.measured_clock IS NULL OR sl.status NOT IN ('satisfied', 'cancelled'))"
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
    keys = [(d, *KEYS[d]) for d in request.keys]
    select_keys = [f"{expr} AS k_{d}" for d, expr, _ in keys]
    if request.by_period:
        # The period's number (1, 2, ...): a binary search of the periods' first instants,
        # several times cheaper per slot than date_trunc of the local time (bench/README.md).
        select_keys.insert(0, f"width_bucket(m.opened_at, {bounds}) AS k_period")
    names = [f"k_{d}" for d, _, _ in keys]
    grouped = f"GROUP BY {', '.join(str(i + 1) for i in range(len(select_keys)))}"
    measured += f""",
    agg AS (
        SELECT {", ".join([*select_keys, AGGREGATES]) if select_keys else AGGREGATES}
        FROM m
        {grouped if select_keys else ""}
    )"""
    if not request.by_period:
        order = ", ".join(f"{n} NULLS LAST" for n in names) or "1"
        return f"{measured} SELECT * FROM agg ORDER BY {order}", args
    # Every period for every group seen. Groups are numbered (null keys alike) so the grid
    # joins the aggregates on a number, by hash: joined on the keys themselves (IS NOT
    # DISTINCT FROM, which no hash join takes), every grid row was compared with every
    # group's rows, 18 s for 6 000 holders over five weeks (bench/README.md).
    if names:
        listed = ", ".join(names)
        numbered = f"SELECT agg.*, dense_rank() OVER (ORDER BY {listed}) AS gid FROM agg"
        groups, on = f"SELECT DISTINCT gid, {listed} FROM ag", " AND a.gid = g.gid"
    else:
        numbered, groups, on = "SELECT * FROM agg", "SELECT 1 AS one", ""
    counts = ", ".join(
        f"coalesce(a.{n}, 0) AS {n}"
        if n not in ("pickup_biz", "pickup_real", "done_biz", "done_real")
        else f"a.{n}"
        for n in _AGG_NAMES
    )
    sql = f"""{measured},
    periods AS (SELECT generate_series(1, cardinality({bounds})) AS k_period),
    ag AS ({numbered}),
    g AS ({groups})
    SELECT ({bounds})[p.k_period] AS k_period, {"".join(f"g.{n}, " for n in names)}{counts}
    FROM periods p CROSS JOIN g
    LEFT JOIN ag a ON a.k_period = p.k_period{on}
    ORDER BY p.k_period{"".join(f", g.{n} NULLS LAST" for n in names)}"""
    return sql, args


def _row(record: asyncpg.Record, zone: ZoneInfo) -> reports.ReportRow:
    period = record.get("k_period")
    return reports.ReportRow(
        workflow=record.get("k_workflow"),
        state=record.get("k_state"),
        slot=record.get("k_slot"),
        audience=record.get("k_audience"),
        holder=record.get("k_holder"),
        priority=record.get("k_priority"),
        period_start=period.astimezone(zone) if period is not None else None,
        opened=record["opened"],
        met=record["met"],
        breached=record["breached"],
        still_open=record["still_open"],
        at_risk_now=record["at_risk_now"],
        breached_now=record["breached_now"],
        pickup_business=reports.Percentiles.of(record["pickup_biz"]),
        pickup_real=reports.Percentiles.of(record["pickup_real"]),
        completion_business=reports.Percentiles.of(record["done_biz"]),
        completion_real=reports.Percentiles.of(record["done_real"]),
        lead_us=record["lead_us"],
        worked_us=record["worked_us"],
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
