"""Per-slot report measures taken on read, as SQL (the report's live slots, and backfill).

For each slot ``where`` selects (CTE ``mc``): time to pickup and to
completion in business time (the inlined ``business_us`` on the slot's
calendar, read from per-day rows, ``calendar_days.py``) and real time, both
minus the clock's paused intervals (time to pickup as the slot keeps it from
its pickup on, when it does); met / breached from the slot's milestone clock;
held time from the slot's held facts (``core/slots/holding.py``: what its
timeline says), or, for a clock with pauses, the timeline's held ranges minus
the paused ones (``range_agg``, multirange difference); at risk and breached
now. Ended slots carry the same numbers stored (``slot_measures.py``), so a
report runs this only on live ones.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from taskflow.core.common import durations
from taskflow.core.slots import holding
from taskflow.store.clocks import calendar_days, risk_sql
from taskflow.store.clocks.business_sql import business_us, real_us
from taskflow.store.common import sql
from taskflow.store.common.sql_builder import compose
from taskflow.store.reports import report_kept

#: Timeline kinds that start (claimed, assigned) or end (the rest) a slot's held time.
HELD_KINDS = "(" + ", ".join(f"'{k}'" for k in holding.HELD_KINDS) + ")"
MOVE_KINDS = "(" + ", ".join(f"'{k}'" for k in holding.MOVE_KINDS) + ")"


def is_move(line: str) -> str:
    """SQL: timeline row ``line`` moves its slot (``core/slots/holding``): a claim, assignment,
    release or end, or a reassignment whose line says whether it holds."""
    return (
        f"({line}.kind IN {MOVE_KINDS} "
        f"OR ({line}.kind = '{holding.REASSIGNED}' AND {line}.details ? 'held'))"
    )


def holds(line: str) -> str:
    """SQL: timeline row ``line`` (a move) starts a hold of its slot."""
    return (
        f"({line}.kind IN {HELD_KINDS} "
        f"OR ({line}.kind = '{holding.REASSIGNED}' AND ({line}.details->>'held')::boolean))"
    )


def _business(end: str, end_us: str, day: str) -> str:
    """Business µs from the slot's opening to ``end`` (its day row ``day``), via day rows."""
    return calendar_days.business_at("s.cal", "s.opened_at", "s.o_us", "x0", end, end_us, day)


def _paused_part(cal: str, end: str) -> str:
    """Business (or real) µs of pause ``p`` inside ``[s.opened_at, end]``."""
    return business_us(cal, "greatest(p.a, s.opened_at)", f"least(p.b, {end})")


def _paused(cal: str, end: str) -> str:
    """SQL for the business (or real) µs of the clock's pauses inside ``[s.opened_at, end]``:
    0 without pauses (a subquery in a CASE branch runs only for the slots that take it)."""
    return f"""(CASE WHEN s.has_pauses THEN coalesce((
        SELECT sum({_paused_part(cal, end)})
        FROM (SELECT (e->>0)::timestamptz AS a, coalesce((e->>1)::timestamptz, $1) AS b
              FROM jsonb_array_elements(s.pauses) e) p), 0) ELSE 0 END)"""


def measure(multirange: str) -> str:
    """SQL for the length in µs of a tstzmultirange expression (0 when null or empty)."""
    return (
        f"(SELECT coalesce(sum((extract(epoch FROM upper(r) - lower(r)) * 1000000)::bigint), 0) "
        f"FROM unnest({multirange}) r)"
    )


def held_ranges(slot: str, now: str) -> str:
    """SQL for the held ranges of slot ``slot``'s timeline (a tstzmultirange; null if none)."""
    return f"""(
        SELECT range_agg(tstzrange(e.at, e.until)) FILTER (WHERE e.held AND e.at < e.until)
        FROM (SELECT a.at, {holds("a")} AS held,
                     least(coalesce(lead(a.at) OVER (ORDER BY a.at, a.id), {now}), {now}) AS until
              FROM audit_event a
              WHERE a.run = {slot}.run AND a.slot = {slot}.id AND {is_move("a")}) e)"""


def held_lateral(slot: str, now: str) -> str:
    """A LATERAL subquery over slot ``slot``'s timeline: its held ranges (``ev.held``)."""
    return f"LEFT JOIN LATERAL (SELECT {held_ranges(slot, now)} AS held) ev ON true"


def paused(pauses: str, now: str) -> str:
    """SQL for a clock's pauses (jsonb ``[[start, end|null], ...]``) as a tstzmultirange."""
    return (
        f"(SELECT range_agg(tstzrange((p->>0)::timestamptz, "
        f"greatest((p->>0)::timestamptz, coalesce((p->>1)::timestamptz, {now})))) "
        f"FROM jsonb_array_elements(coalesce({pauses}, '[]'::jsonb)) p)"
    )


def has_pauses(pauses: str) -> str:
    """SQL: the clock's pauses (jsonb, null without a clock) are not empty."""
    return f"jsonb_array_length(coalesce({pauses}, '[]'::jsonb)) > 0"


def held_now(slot: str, now: str) -> str:
    """SQL for slot ``slot``'s held µs at ``now`` from its held facts (``core/slots/holding``):
    the closed holds, and the open one up to ``now``; what its timeline says, without reading it."""
    return f"({slot}.held_us + coalesce(greatest(0, {real_us(f'{slot}.held_since', now)}), 0))"


def worked(slot: str, pauses: str, now: str) -> str:
    """SQL for a slot's held µs minus its clock's pauses: from the slot's held facts, or, when
    the clock has pauses, from the held ranges of its timeline, read only then (a subquery
    in a CASE branch runs for the rows that take it; a lateral join ran for every slot)."""
    ranges = f"{held_ranges(slot, now)} - coalesce({paused(pauses, now)}, '{{}}'::tstzmultirange)"
    return f"(CASE WHEN {has_pauses(pauses)} THEN {measure(ranges)} ELSE {held_now(slot, now)} END)"


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


def slot_clock(slot: str) -> str:
    """The report's clock of slot ``slot`` (``c``, as :func:`clock_lateral` with no milestone
    asked) from the copy the slot keeps of it (``sla_*``, ``store/clocks/deadlines.py``): no
    probe."""
    columns = ", ".join(f"{slot}.sla_{c} AS {c}" for c in report_kept.CLOCK_FIELDS)
    return f"CROSS JOIN LATERAL (SELECT {columns}) c"


#: Day rows reach this far past the window's end: a live slot's due instant, for at risk now
#: (beyond it, the exact lookup).
DUE_AHEAD = "interval '35 days'"
#: Now in µs since 1970 ($9, computed once by the caller: a numeric step per slot is not free).
NOW_US = "$9::bigint"
DAYS_TO = f"greatest($1::timestamptz, $3) + {DUE_AHEAD}"


#: A live slot whose clock runs and is not yet due: the only ones that may be at risk now
#: (and the only ones whose due instant's day row is joined, ``xd``).
_RISK_OPEN = (
    f"s.live AND s.has_clock AND {risk_sql.running('s.met_at', 's.due_us', NOW_US, 's.pauses')}"
)


def _at_risk_now() -> str:
    """SQL: at risk now, i.e. business µs from now to the due instant on the clock's calendar
    (the due instant's day row ``xd`` less the calendar's count at now, ``cal_now``, once)
    at most the share $8 of the budget (working days at the calendar's day length)."""
    left = risk_sql.business_left("xd", "s.clock_cal", "s.due_at", "s.due_us", NOW_US)
    risky = risk_sql.within_share(left, "s.budget_us", "s.working_days", "$8")
    # A CASE, not an AND: the day row is joined only for these slots, and the lookup it
    # would fall back to must not run for the others.
    return f"(CASE WHEN {_RISK_OPEN} THEN {risky} ELSE false END)"


#: The opening's day row serves pickup and completion: needed for a pickup measured here or
#: a completion (an open slot has neither: no probe).
_O_DAY = (
    "CASE WHEN (NOT s.pickup_kept AND s.p_us IS NOT NULL) OR s.d_us IS NOT NULL THEN s.o_us END"
)


#: The statements of ``reports/measure_sql.sql`` (the skeleton of the per-slot measures).
SQL = sql.statements("reports/measure_sql")


def _measured() -> str:
    """The ``measured`` statement of ``reports/measure_sql.sql``, its shared pieces filled in
    (its ``/*:clock*/`` and ``/*:where*/`` left for :func:`measured_ctes`)."""
    text = "\n".join(
        line
        for line in SQL["measured"].splitlines()
        if not line.startswith("--")  # its leading comments: the text goes inside others
    )
    picked, done = ("s.picked_at", "s.p_us", "x1"), ("s.satisfied_at", "s.d_us", "x2")
    risk_day = f"CASE WHEN {_RISK_OPEN} THEN s.due_us END"
    return compose(
        text,
        calendar_ctes=calendar_days.ctes("$6::text[]", "$2::timestamptz", DAYS_TO),
        cal_now=risk_sql.cal_now("$6::text[]", "$7::bigint[]", "$1::timestamptz"),
        worked=worked("sl", "c.pauses", "$1"),
        has_pauses=has_pauses("c.pauses"),
        pickup_biz=f"{_business(*picked)} - {_paused('s.cal', 's.picked_at')}",
        pickup_real=f"(s.p_us - s.o_us) - {_paused('NULL', 's.picked_at')}",
        done_biz=f"{_business(*done)} - {_paused('s.cal', 's.satisfied_at')}",
        done_real=f"(s.d_us - s.o_us) - {_paused('NULL', 's.satisfied_at')}",
        lead_biz=business_us("NULL", "s.opened_at", "s.ended_at"),
        at_risk_now=_at_risk_now(),
        join_x0=calendar_days.join("x0", "s.cal", _O_DAY),
        join_x1=calendar_days.join("x1", "s.cal", "CASE WHEN NOT s.pickup_kept THEN s.p_us END"),
        join_x2=calendar_days.join("x2", "s.cal", "s.d_us"),
        join_xd=calendar_days.join("xd", "s.clock_cal", risk_day),
        clock="/*:clock*/",
        where="/*:where*/",
    )


#: The statement read by :func:`measured_ctes`, composed once.
_MEASURED = _measured()


def measured_ctes(milestone: str | None, where: str) -> str:
    """CTEs ending in ``mc``: per-slot measures, on read, of the slots ``where`` selects.

    Parameters $1-$9 are those of :func:`base_args`; ``milestone`` is the SQL
    of the milestone asked (None: each slot's finished clock, else assigned).
    """
    # With a milestone asked, a slot may be measured on another clock than the one it keeps.
    clock = clock_lateral("sl", milestone) if milestone is not None else slot_clock("sl")
    return compose(_MEASURED, clock=clock, where=where)


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
        durations.epoch_us(now),
    ]
