"""Running clocks and at risk now, in SQL: shared by claims, the report's at-risk count and
the manager's at-risk list.

A running clock is at risk when the business time left to its due instant is
at most a share of its budget. Time left is the calendar's count at the due
instant, read from that instant's day row (``calendar_days``), less its count
at now, looked up once per calendar (``cal_now``): no lookup per clock.
"""

from __future__ import annotations

from taskflow.store.clocks import calendar_days
from taskflow.store.clocks.business_sql import cum_us, epoch_us


def not_paused(pauses: str) -> str:
    """SQL: a clock's ``pauses`` (jsonb ``[[start, end|null], ...]``) hold no open pause: none,
    or the last has ended (``core.clocks.paused``)."""
    return f"({pauses}->-1 IS NULL OR {pauses}->-1->>1 IS NOT NULL)"


def running(met_at: str, due: str, now: str, pauses: str) -> str:
    """SQL: a clock runs toward a due instant still ahead: not met, ``due`` after ``now``
    (instants or their µs), and not paused."""
    return f"{met_at} IS NULL AND {due} > {now} AND {not_paused(pauses)}"


def cal_now(cals: str, day_us: str, now: str) -> str:
    """The body of CTE ``cal_now``: each calendar of ``cals`` (text[]) with its count at
    ``now`` (one lookup each) and its working-day length (``day_us``, bigint[])."""
    return (
        f"SELECT c.calendar, {cum_us('c.calendar', now)} AS cum, c.day_us "
        f"FROM unnest({cals}, {day_us}) AS c(calendar, day_us)"
    )


def business_left(day: str, cal: str, due: str, due_us: str, now_us: str, nw: str = "nw") -> str:
    """SQL: business µs from now to ``due`` (in µs ``due_us``) on calendar ``cal``, from the due
    instant's day row ``day`` and the calendar's ``cal_now`` row ``nw``; real µs without one."""
    counted = calendar_days.cum_at(day, cal, due, due_us)
    return f"(CASE WHEN {cal} IS NULL THEN {due_us} - {now_us} ELSE {counted} - {nw}.cum END)"


def within_share(left: str, budget_us: str, working_days: str, share: str, nw: str = "nw") -> str:
    """SQL: ``left`` is at most ``share`` of the budget: its µs plus its working days at the
    calendar's day length (``nw``; a whole day without a calendar)."""
    day = f"coalesce({nw}.day_us, {calendar_days.DAY_US})"
    return f"{left} <= {share}::float8 * ({budget_us} + {working_days} * {day})"


#: The due instant's µs of clock ``k``.
_DUE_US = epoch_us("k.due_at")
#: Due instants this far ahead read their day rows; later ones, the exact lookup.
_AHEAD = "interval '35 days'"

#: The markers the at-risk statements share (``reports/at_risk.sql``, ``reports/metrics_sql.sql``):
#: now $1, calendars $2 (text[]) and their working-day lengths $3 (bigint[]), the at-risk
#: share of the budget $4 (float8), now in µs $5 (bigint); the clock is ``k``.
AT_RISK_MARKERS = {
    "calendar_ctes": calendar_days.ctes(
        "$2::text[]", "$1::timestamptz", f"$1::timestamptz + {_AHEAD}"
    ),
    "cal_now": cal_now("$2::text[]", "$3::bigint[]", "$1::timestamptz"),
    "running": running("k.met_at", "k.due_at", "$1", "k.pauses"),
    "within_share": within_share("x.left_us", "k.budget_us", "k.working_days", "$4"),
    "left": business_left("xd", "k.calendar", "k.due_at", _DUE_US, "$5::bigint"),
    "due_us": _DUE_US,
    "day_us": str(calendar_days.DAY_US),
}
