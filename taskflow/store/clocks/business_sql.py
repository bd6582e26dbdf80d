"""Business time as SQL expressions: the inlined form of the ``business_us`` SQL function.

A SQL function whose body reads a table is not inlined by the planner, and
calling it costs ten times the index lookups it makes (bench/report.py), so
statements over many rows inline these expressions instead. The function
(tables.EXTRA_FUNCTIONS) stays for ad hoc queries; a test checks both agree
with ``Calendar.elapsed``.
"""

from __future__ import annotations


def real_us(t0: str, t1: str) -> str:
    """SQL for ``t1 - t0`` in integer µs (exact: extract on an interval is numeric)."""
    return f"(extract(epoch FROM ({t1}) - ({t0})) * 1000000)::bigint"


def epoch_us(t: str) -> str:
    """SQL for instant ``t`` as integer µs since 1970 (one numeric step; then bigint maths)."""
    return f"(extract(epoch FROM {t}) * 1000000)::bigint"


def cum_us(cal: str, t: str) -> str:
    """SQL for working µs from the calendar's anchor to ``t``: one index-only lookup."""
    return (
        f"(SELECT i.cum_us + {real_us('i.starts_at', f'least({t}, i.ends_at)')} "
        f"FROM calendar_interval i WHERE i.calendar = {cal} AND i.starts_at <= {t} "
        "ORDER BY i.starts_at DESC LIMIT 1)"
    )


def business_us(cal: str, t0: str, t1: str) -> str:
    """SQL for business µs between ``t0`` and ``t1`` on calendar ``cal`` (null: real time).

    The same expression as the SQL function ``business_us`` (tables.EXTRA_FUNCTIONS).
    """
    return (
        f"(CASE WHEN ({t0}) IS NULL OR ({t1}) IS NULL THEN NULL "
        f"WHEN ({t1}) <= ({t0}) THEN 0::bigint WHEN ({cal}) IS NULL THEN {real_us(t0, t1)} "
        f"ELSE {cum_us(cal, t1)} - {cum_us(cal, t0)} END)"
    )
