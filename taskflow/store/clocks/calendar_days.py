"""Business time for many instants at once: the report's calendars cut into UTC days, hash-joined.

``business_us`` (one index lookup per instant) is exact but, as a correlated
subquery per slot, costs most of a report over many slots. A report's
instants fall inside its window, so the statement first builds, from
``calendar_interval``, one row per calendar and UTC day of the window: the
working time before the day (``cum0``: one index lookup per calendar at the
first day, then the running sum of the days' working time) and the day's
working pieces (up to three, as offsets in µs). The slots then hash-join their instants' days, and
cumulative time is arithmetic on that row; the exact lookup remains the
fallback for a day with more pieces or an instant outside the window.
"""

from __future__ import annotations

from taskflow.store.clocks.business_sql import cum_us
from taskflow.store.common import sql
from taskflow.store.common.sql_builder import with_columns

#: Working pieces a day row carries (more: the instant falls back to the lookup).
PIECES = 3
DAY_US = 86_400_000_000

#: The day rows' CTEs of ``clocks/calendar_days.sql`` (markers filled by :func:`ctes`).
SQL = sql.statements("clocks/calendar_days")


def utc_midnight(t: str) -> str:
    """SQL for the start of ``t``'s UTC day, as timestamptz (independent of the session zone)."""
    return f"(date_trunc('day', ({t}) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')"


def ctes(cals: str, lo: str, hi: str) -> str:
    """CTEs ending in ``cal_day``: every calendar in ``cals`` (text[]) x every UTC day of
    ``[lo, hi]`` (``clocks/calendar_days.sql``, filled by each statement that reads days, at
    its import)."""
    text = with_columns({"ctes": SQL["ctes"]}, cals=cals, lo=utc_midnight(lo), hi=hi)["ctes"]
    return f"\n{text}"


def join(alias: str, cal: str, t_us: str) -> str:
    """A LEFT JOIN of ``cal_day`` as ``alias`` on the UTC day of instant ``t_us`` (µs, >= 1970)."""
    return (
        f"LEFT JOIN cal_day {alias} ON {alias}.calendar = {cal} "
        f"AND {alias}.day_no = ({t_us}) / {DAY_US}"
    )


def cum_at(alias: str, cal: str, t: str, t_us: str) -> str:
    """SQL for ``cum_us(cal, t)`` from the joined day row (the lookup when it cannot serve).

    Integer arithmetic on ``t_us`` (``t`` in µs): numeric steps per instant cost more than
    the rest of the report's work on a slot.
    """
    off = f"(({t_us}) - {alias}.day_no * {DAY_US})"
    parts = " + ".join(
        f"coalesce(greatest(0, least({off}, {alias}.e{k}) - {alias}.s{k}), 0)"
        for k in range(1, PIECES + 1)
    )
    return (
        f"(CASE WHEN {alias}.n <= {PIECES} AND {alias}.cum0 IS NOT NULL "
        f"THEN {alias}.cum0 + {parts} ELSE {cum_us(cal, t)} END)"
    )


def business_at(cal: str, t0: str, t0_us: str, x0: str, t1: str, t1_us: str, x1: str) -> str:
    """SQL for business µs from ``t0`` to ``t1`` (in µs ``t0_us``, ``t1_us``; day rows ``x0``,
    ``x1``); real time when the calendar is null; equal to ``business_sql.business_us``."""
    return (
        f"(CASE WHEN ({t0_us}) IS NULL OR ({t1_us}) IS NULL THEN NULL "
        f"WHEN ({t1_us}) <= ({t0_us}) THEN 0::bigint WHEN ({cal}) IS NULL "
        f"THEN ({t1_us}) - ({t0_us}) "
        f"ELSE {cum_at(x1, cal, t1, t1_us)} - {cum_at(x0, cal, t0, t0_us)} END)"
    )
