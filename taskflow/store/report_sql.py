"""The SLA report as one SQL statement: per-slot measures, then grouped aggregates.

Slots that ended carry their measures, stored when they ended
(``store/slot_measures.py``): those rows are read as stored. The rest (live
slots, and ended ones not measured yet) are measured on read, and every
number is computed on the database: per slot, time to pickup and to
completion in business time (``business_us`` on the slot's calendar, see
``business_time.py``) and real time, both minus the clock's paused intervals;
met / breached from the slot's milestone clock; held time from the slot's
timeline (claimed or assigned until released, satisfied or cancelled) minus
pauses, as ranges (``range_agg``, multirange difference). Both kinds of rows
meet in a UNION ALL, then one GROUP BY
with ``percentile_cont`` and, for periods, a series of periods crossed with the
groups seen so empty periods show as zeros.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core import reports
from taskflow.store import calendar_days, db
from taskflow.store.business_sql import business_us, cum_us, epoch_us, real_us

#: Timeline kinds that start (claimed, assigned) or end (the rest) a slot's held time.
HELD_KINDS = "('slot.claimed', 'slot.assigned')"
MOVE_KINDS = (
    "('slot.claimed', 'slot.assigned', 'slot.released', 'slot.satisfied', 'slot.cancelled')"
)


def _business(end: str, end_us: str, day: str) -> str:
    """Business µs from the slot's opening to ``end`` (its day row ``day``), via day rows."""
    return calendar_days.business_at("s.cal", "s.opened_at", "s.o_us", "x0", end, end_us, day)


def _paused_part(cal: str, end: str) -> str:
    """Business (or real) µs of pause ``p`` inside ``[s.opened_at, end]``."""
    return business_us(cal, "greatest(p.a, s.opened_at)", f"least(p.b, {end})")


def measure(multirange: str) -> str:
    """SQL for the length in µs of a tstzmultirange expression (0 when null or empty)."""
    return (
        f"(SELECT coalesce(sum((extract(epoch FROM upper(r) - lower(r)) * 1000000)::bigint), 0) "
        f"FROM unnest({multirange}) r)"
    )


def held_lateral(slot: str, now: str) -> str:
    """A LATERAL subquery over slot ``slot``'s timeline: first pickup and held ranges (``ev``)."""
    return f"""LEFT JOIN LATERAL (
        SELECT min(e.at) FILTER (WHERE e.held) AS picked_at,
               range_agg(tstzrange(e.at, e.until))
                   FILTER (WHERE e.held AND e.at < e.until) AS held,
               -- One holder at a time: a slot's held intervals never overlap, so they add up.
               coalesce(sum({real_us("e.at", "e.until")}) FILTER (WHERE e.held AND e.at < e.until),
                        0) AS held_us
        FROM (SELECT a.at, a.kind IN {HELD_KINDS} AS held,
                     least(coalesce(lead(a.at) OVER (ORDER BY a.at, a.id), {now}), {now}) AS until
              FROM audit_event a
              WHERE a.run = {slot}.run AND a.slot = {slot}.id AND a.kind IN {MOVE_KINDS}) e
    ) ev ON true"""


def paused(pauses: str, now: str) -> str:
    """SQL for a clock's pauses (jsonb ``[[start, end|null], ...]``) as a tstzmultirange."""
    return (
        f"(SELECT range_agg(tstzrange((p->>0)::timestamptz, "
        f"greatest((p->>0)::timestamptz, coalesce((p->>1)::timestamptz, {now})))) "
        f"FROM jsonb_array_elements(coalesce({pauses}, '[]'::jsonb)) p)"
    )


def worked(ev: str, pauses: str, now: str) -> str:
    """SQL for a slot's held µs minus its clock's pauses (ranges only when it has pauses)."""
    ranges = f"{ev}.held - coalesce({paused(pauses, now)}, '{{}}'::tstzmultirange)"
    return (
        f"(CASE WHEN jsonb_array_length(coalesce({pauses}, '[]'::jsonb)) = 0 THEN {ev}.held_us "
        f"ELSE {measure(ranges)} END)"
    )


def clock_lateral(slot: str, milestone: str | None) -> str:
    """The slot's milestone clock (``c``): the one asked (SQL ``milestone``), else finished
    before assigned (the only milestones, ``tables.SlaClock``)."""
    if milestone is None:
        where, join = "", "LEFT JOIN"
    else:
        where, join = f" AND k.milestone = {milestone}", "JOIN"
    return f"""{join} LATERAL (
        SELECT k.milestone, k.calendar, k.pauses, k.met_at, k.due_at, k.breached_at,
               k.budget_us, k.working_days
        FROM sla_clock k WHERE k.slot = {slot}.id{where}
        -- 'finished' sorts after 'assigned': the index (slot, milestone) read backwards, no sort.
        ORDER BY k.milestone DESC LIMIT 1
    ) c ON true"""


def _filters(f: reports.ReportFilter, args: list[Any]) -> str:
    def param(value: Any, cast: str = "") -> str:
        args.append(value)
        return f"${len(args)}{cast}"

    parts = []
    if f.workflow is not None:
        parts.append(f"sl.workflow = {param(f.workflow)}")
    if f.state is not None:
        parts.append(f"sl.state = {param(f.state)}")
    if f.slot is not None:
        parts.append(f"sl.name = {param(f.slot)}")
    if f.audience:
        parts.append(f"sl.audience && {param(list(f.audience), '::text[]')}")
    if f.holder is not None:
        parts.append(f"coalesce(sl.holder, sl.satisfied_by) = {param(f.holder)}")
    if f.priority is not None:
        parts.append(f"sl.priority = {param(f.priority)}")
    return "".join(f" AND {p}" for p in parts)


#: Group key -> the column of ``m`` it reads.
_KEY_COLUMNS = {
    reports.WORKFLOW: "workflow",
    reports.STATE: "state",
    reports.SLOT: "name",
    reports.AUDIENCE: "audience",
    reports.HOLDER: "holder",
    reports.PRIORITY: "priority",
}
#: Group key -> (SQL expression over the measured rows ``m`` and ``au``, SQL type).
KEYS = {
    reports.WORKFLOW: ("m.workflow", "text"),
    reports.STATE: ("m.state", "text"),
    reports.SLOT: ("m.name", "text"),
    reports.AUDIENCE: ("au.key", "text"),
    reports.HOLDER: ("m.holder", "text"),
    reports.PRIORITY: ("m.priority", "int"),
}
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


#: Day rows reach this far past the window's end: a live slot's due instant, for at risk now
#: (beyond it, the exact lookup).
DUE_AHEAD = "interval '35 days'"
NOW_US = epoch_us("$1::timestamptz")
DAYS_TO = f"greatest($1::timestamptz, $3) + {DUE_AHEAD}"


def _left_now() -> str:
    """Business µs from now to the due instant on the clock's calendar (``business_us``):
    the due instant's day row ``xd`` less the calendar's count at now (``cal_now``, once)."""
    due = calendar_days.cum_at("xd", "s.clock_cal", "s.due_at", "s.due_us")
    return (
        f"(CASE WHEN s.due_at IS NULL THEN NULL WHEN s.due_us <= {NOW_US} THEN 0::bigint "
        f"WHEN s.clock_cal IS NULL THEN s.due_us - {NOW_US} ELSE {due} - nw.cum END)"
    )


#: Slots whose measures were stored when they ended (``store/slot_measures.py``).
ENDED = "sl.status IN ('satisfied', 'cancelled')"
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
    "audience": "sl.audience",
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
    """Rows for the aggregate: measured on read (``mc``) and stored (``stored`` selects)."""
    read = ", ".join(f"{n}::bigint" if n in _BIGINT_NAMES else n for n in names)
    kept = ", ".join(_COLUMNS[n] for n in names)
    return f"SELECT {read} FROM mc UNION ALL SELECT {kept} FROM slot sl WHERE {stored}"


def measured_ctes(milestone: str | None, where: str) -> str:
    """CTEs ending in ``mc``: per-slot measures, on read, of the slots ``where`` selects.

    Parameters $1-$8 are those of :func:`base_args`; ``milestone`` is the SQL
    of the milestone asked (None: each slot's finished clock, else assigned).
    """
    clock = clock_lateral("sl", milestone)
    return f"""
    WITH wfcal AS (SELECT * FROM unnest($4::text[], $5::text[]) AS w(workflow, calendar)),
    {calendar_days.ctes("$6::text[]", "$2::timestamptz", DAYS_TO)},
    cal_now AS (
        SELECT c.calendar, {cum_us("c.calendar", "$1::timestamptz")} AS cum
        FROM unnest($6::text[]) AS c(calendar)
    ),
    s AS (
        SELECT sl.id, sl.workflow, sl.state, sl.name, sl.priority, sl.audience,
               coalesce(sl.holder, sl.satisfied_by) AS holder,
               sl.status IN ('pending', 'open', 'claimed') AS live,
               sl.opened_at, sl.satisfied_at,
               least(coalesce(sl.satisfied_at, sl.cancelled_at, $1), $1) AS ended_at,
               coalesce(ev.picked_at, sl.claimed_at, sl.satisfied_at) AS picked_at,
               {epoch_us("sl.opened_at")} AS o_us,
               {epoch_us("coalesce(ev.picked_at, sl.claimed_at, sl.satisfied_at)")} AS p_us,
               {epoch_us("sl.satisfied_at")} AS d_us,
               {epoch_us("c.due_at")} AS due_us,
               {worked("ev", "c.pauses", "$1")} AS worked_us,
               c.calendar AS clock_cal, coalesce(c.calendar, w.calendar) AS cal,
               coalesce(c.milestone, '') AS clock_milestone,
               c.budget_us IS NOT NULL AS has_clock, c.pauses, c.met_at, c.due_at,
               c.breached_at, c.budget_us, c.working_days
        FROM slot sl
        LEFT JOIN wfcal w ON w.workflow = sl.workflow
        {clock}
        {held_lateral("sl", "$1")}
        WHERE {where}
    ),
    mc AS (
        SELECT s.*,
               {_business("s.picked_at", "s.p_us", "x1")} - coalesce(pz.pick_biz, 0)
                   AS pickup_biz,
               (s.p_us - s.o_us) - coalesce(pz.pick_real, 0)
                   AS pickup_real,
               {_business("s.satisfied_at", "s.d_us", "x2")} - coalesce(pz.done_biz, 0)
                   AS done_biz,
               (s.d_us - s.o_us) - coalesce(pz.done_real, 0)
                   AS done_real,
               {business_us("NULL", "s.opened_at", "s.ended_at")} AS lead_us,
               s.has_clock AND s.met_at IS NOT NULL AND NOT bz.breached AS met,
               bz.breached,
               s.live AND s.has_clock AND s.met_at IS NULL
                   AND (s.due_at <= $1 OR s.breached_at <= $1) IS TRUE AS breached_now,
               s.live AND s.has_clock AND s.met_at IS NULL AND s.due_at > $1
                   AND NOT (jsonb_array_length(s.pauses) > 0 AND s.pauses->-1->>1 IS NULL)
                   AND {_left_now()}
                       <= $8::float8 * (s.budget_us + s.working_days
                           * coalesce(($7::bigint[])[array_position($6::text[], s.clock_cal::text)],
                                      86400000000)) AS at_risk_now
        FROM s
        {calendar_days.join("x0", "s.cal", "s.o_us")}
        {calendar_days.join("x1", "s.cal", "s.p_us")}
        {calendar_days.join("x2", "s.cal", "s.d_us")}
        LEFT JOIN cal_now nw ON nw.calendar = s.clock_cal
        {calendar_days.join("xd", "s.clock_cal", "s.due_us")}
        CROSS JOIN LATERAL (SELECT s.has_clock AND (
            (s.breached_at IS NOT NULL AND s.breached_at <= $1)
            OR coalesce(CASE WHEN s.met_at IS NOT NULL THEN s.due_at < s.met_at
                             ELSE s.due_at <= $1 END, false)) AS breached) bz
        LEFT JOIN LATERAL (
            SELECT sum({_paused_part("s.cal", "s.picked_at")}) AS pick_biz,
                   sum({_paused_part("NULL", "s.picked_at")}) AS pick_real,
                   sum({_paused_part("s.cal", "s.satisfied_at")}) AS done_biz,
                   sum({_paused_part("NULL", "s.satisfied_at")}) AS done_real
            FROM (SELECT (e->>0)::timestamptz AS a, coalesce((e->>1)::timestamptz, $1) AS b
                  FROM jsonb_array_elements(s.pauses) e
                  -- A one-time filter: slots without pauses skip the subquery.
                  WHERE jsonb_array_length(coalesce(s.pauses, '[]'::jsonb)) > 0) p
        ) pz ON true
    )"""


def base_args(
    now: datetime,
    start: datetime,
    end: datetime,
    workflow_calendars: dict[str, str | None],
    day_us: dict[str, int],
    at_risk_left: float,
) -> list[Any]:
    return [
        now,
        start,
        end,
        list(workflow_calendars),
        list(workflow_calendars.values()),
        list(day_us),
        list(day_us.values()),
        at_risk_left,
    ]


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
    args = base_args(now, request.start, request.end, workflow_calendars, day_us, at_risk_left)
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
    measured = f"""{measured_ctes(milestone, f"{window} AND {on_read}{where}")},
    m AS ({m})"""
    zone = unit = ""
    if request.by_period:
        args += [request.zone, request.period]
        zone, unit = f"${len(args) - 1}", f"${len(args)}"
    keys = [(d, *KEYS[d]) for d in request.keys]
    select_keys = [f"{expr} AS k_{d}" for d, expr, _ in keys]
    if request.by_period:
        select_keys.insert(0, f"date_trunc({unit}, m.opened_at AT TIME ZONE {zone}) AS k_period")
    audience_join = (
        "LEFT JOIN LATERAL (SELECT k AS key FROM unnest(m.audience) k "
        "WHERE k LIKE 'role:%' OR k LIKE 'group:%') au ON true"
        if reports.AUDIENCE in request.keys
        else ""
    )
    names = [f"k_{d}" for d, _, _ in keys]
    grouped = f"GROUP BY {', '.join(str(i + 1) for i in range(len(select_keys)))}"
    measured += f""",
    agg AS (
        SELECT {", ".join([*select_keys, AGGREGATES]) if select_keys else AGGREGATES}
        FROM m {audience_join}
        {grouped if select_keys else ""}
    )"""
    if not request.by_period:
        order = ", ".join(f"{n} NULLS LAST" for n in names) or "1"
        return f"{measured} SELECT * FROM agg ORDER BY {order}", args
    groups = (
        f"SELECT DISTINCT {', '.join(names)} FROM agg WHERE opened > 0"
        if names
        else "SELECT 1 AS one"
    )
    on = "".join(f" AND a.{n} IS NOT DISTINCT FROM g.{n}" for n in names)
    counts = ", ".join(
        f"coalesce(a.{n}, 0) AS {n}"
        if n not in ("pickup_biz", "pickup_real", "done_biz", "done_real")
        else f"a.{n}"
        for n in _AGG_NAMES
    )
    sql = f"""{measured},
    periods AS (
        SELECT generate_series(date_trunc({unit}, $2 AT TIME ZONE {zone}),
                               ($3 AT TIME ZONE {zone}) - interval '1 microsecond',
                               ('1 ' || {unit})::interval) AS k_period
    ),
    g AS ({groups})
    SELECT p.k_period, {"".join(f"g.{n}, " for n in names)}{counts}
    FROM periods p CROSS JOIN g
    LEFT JOIN agg a ON a.k_period = p.k_period{on}
    ORDER BY p.k_period{"".join(f", g.{n} NULLS LAST" for n in names)}"""
    return sql, args


def _row(record: asyncpg.Record, zone: Any) -> reports.ReportRow:
    period = record.get("k_period")
    return reports.ReportRow(
        workflow=record.get("k_workflow"),
        state=record.get("k_state"),
        slot=record.get("k_slot"),
        audience=record.get("k_audience"),
        holder=record.get("k_holder"),
        priority=record.get("k_priority"),
        period_start=period.replace(tzinfo=zone) if period is not None else None,
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
    from zoneinfo import ZoneInfo

    sql, args = statement(request, now, workflow_calendars, day_us, at_risk_left)
    await conn.execute(PLANNER)
    zone = ZoneInfo(request.zone)
    return [_row(r, zone) for r in await conn.fetch(sql, *args)]
