"""SLA reports as values: what is asked (dimensions, period, window, filter) and what comes back.

Pure: the numbers themselves are aggregated by the database (see
``store/reports/report_sql.py``); this module checks a request, names the groupings
and renders durations for people. Every duration is integer or fractional
microseconds; business time and real time are kept in separate fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final, NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil.relativedelta import relativedelta

from taskflow import errors
from taskflow.core.access import access
from taskflow.core.common import durations

#: Groupings a report may combine, in the order their keys are shown.
WORKFLOW, STATE, SLOT, AUDIENCE, HOLDER, PRIORITY, PERIOD = (
    "workflow",
    "state",
    "slot",
    "audience",
    "holder",
    "priority",
    "period",
)
#: The definition version the slot's run is on now (docs/versions.md).
VERSION: Final = "version"
DIMENSIONS: Final = (PERIOD, WORKFLOW, VERSION, STATE, SLOT, AUDIENCE, HOLDER, PRIORITY)
PERIOD_UNITS: Final = ("day", "week", "month")
MILESTONES: Final = ("assigned", "finished")
#: Share of a clock's budget left below which a running clock counts as at risk.
#: Mirrors ``core.clocks.DEFAULT_AT_RISK`` (75 % spent = 25 % left).
AT_RISK_LEFT: Final = 0.25
#: Bound on the rows one report may produce per group (periods x groups stays readable).
MAX_PERIODS: Final = 400
#: Percentiles every row carries, in order.
PERCENTILES: Final = (0.5, 0.9, 0.95)


@dataclass(frozen=True)
class ReportFilter:
    """Narrows the slots a report counts; every given part must match."""

    workflow: str | None = None
    state: str | None = None
    slot: str | None = None
    #: Any of these audience keys (``role:finance``, ``group:emea``).
    audience: tuple[str, ...] = ()
    holder: str | None = None
    priority: int | None = None
    #: Where the reader's lead or manager grants reach (``core.access``); None: everywhere.
    scope: access.Scope = None


@dataclass(frozen=True)
class ReportRequest:
    """One SLA report: slots opened in ``[start, end)`` grouped by ``group_by``."""

    start: datetime
    end: datetime
    group_by: tuple[str, ...] = ()
    #: ``assigned`` or ``finished``; None: each slot's finished clock, else its assigned one.
    milestone: str | None = None
    period: str = "week"
    #: The zone periods are cut in (a calendar's zone, or an IANA zone).
    zone: str = "UTC"
    filter: ReportFilter = field(default_factory=ReportFilter)

    @property
    def by_period(self) -> bool:
        return PERIOD in self.group_by

    @property
    def keys(self) -> tuple[str, ...]:
        """The non-period groupings, in display order."""
        return tuple(d for d in DIMENSIONS if d in self.group_by and d != PERIOD)


def check(request: ReportRequest) -> ReportRequest:
    """The request with its groupings in display order, or a ValidationError saying what to fix."""
    if request.start.tzinfo is None or request.end.tzinfo is None:
        raise errors.ValidationError("from and to need a UTC offset.", field="from")
    if request.end <= request.start:
        raise errors.ValidationError(
            "to must be after from: the report covers slots opened in [from, to).", field="to"
        )
    unknown = [d for d in request.group_by if d not in DIMENSIONS]
    if unknown:
        raise errors.ValidationError(
            f"Unknown grouping {unknown[0]!r}: use any of {', '.join(DIMENSIONS)}.",
            field="groupBy",
        )
    if request.milestone is not None and request.milestone not in MILESTONES:
        raise errors.ValidationError(
            f"milestone must be one of {', '.join(MILESTONES)}.", field="milestone"
        )
    if request.period not in PERIOD_UNITS:
        raise errors.ValidationError(
            f"period must be one of {', '.join(PERIOD_UNITS)}.", field="period"
        )
    try:
        ZoneInfo(request.zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise errors.ValidationError(
            f"Unknown time zone {request.zone!r}: name a calendar or an IANA zone.",
            field="zone",
        ) from None
    if request.by_period and periods(request) > MAX_PERIODS:
        raise errors.ValidationError(
            f"That is more than {MAX_PERIODS} {request.period}s: shorten the window or use a "
            "longer period.",
            field="period",
        )
    ordered = tuple(d for d in DIMENSIONS if d in request.group_by)
    return ReportRequest(
        request.start,
        request.end,
        ordered,
        request.milestone,
        request.period,
        request.zone,
        request.filter,
    )


#: How far back a report may reach, and ahead of now: calendars are materialised for
#: the years a report touches, so a window in year 1 or 9999 is refused, not computed.
HISTORY: Final = timedelta(days=30 * 366)
AHEAD: Final = timedelta(days=366)
#: The longest window by default (``TASKFLOW_REPORT_MAX_DAYS``): five years.
MAX_DAYS: Final = 1830


def bound(request: ReportRequest, now: datetime, max_days: int = MAX_DAYS) -> None:
    """Refuse a window outside [now - 30 years, now + 1 year] or longer than ``max_days``.

    Compares aware instants only (no conversion), so extreme values such as
    ``0001-01-01T00:00+14:00`` are refused rather than overflowing.
    """
    if request.start.tzinfo is None or request.end.tzinfo is None:
        raise errors.ValidationError("from and to need a UTC offset.", field="from")
    earliest, latest = now - HISTORY, now + AHEAD
    if request.start < earliest:
        raise errors.ValidationError(
            f"from must be no earlier than {earliest.date().isoformat()}: reports reach back "
            "30 years at most.",
            field="from",
        )
    if request.end > latest:
        raise errors.ValidationError(
            f"to must be no later than {latest.date().isoformat()}: reports reach one year "
            "ahead at most (leave to out for now).",
            field="to",
        )
    days = (request.end - request.start) / timedelta(days=1)
    if days > max_days:
        raise errors.ValidationError(
            f"The window from {request.start.isoformat()} to {request.end.isoformat()} is "
            f"{days:.0f} days; a report covers at most {max_days} days: shorten it, or ask "
            "for several windows.",
            field="from",
            max_days=max_days,
        )


def periods(request: ReportRequest) -> int:
    """An upper bound on the periods the window spans (for the size check)."""
    days = (request.end - request.start) / timedelta(days=1)
    per = {"day": 1.0, "week": 7.0, "month": 28.0}[request.period]
    return int(days / per) + 2


_STEPS: Final = {
    "day": relativedelta(days=1),
    "week": relativedelta(weeks=1),
    "month": relativedelta(months=1),
}


def period_starts(request: ReportRequest) -> list[datetime]:
    """The first instant of each period the window ``[start, end)`` touches, in order
    (aware, in the request's zone).

    A period is a local day, week (from Monday) or month of the zone. It starts at
    the first instant whose local time reaches its local midnight: where a clock
    change skips midnight, the instant of the change. So periods follow each other
    without gaps, and an instant falls in the last period that started at or before
    it (the report finds it so, ``store/reports/report_sql.py``). This is the period of its
    local date, except for the hour a clock change repeats across a period's start
    (none in current rules; Newfoundland's before 2011), which stays in the new one.
    """
    zone = ZoneInfo(request.zone)
    local = request.start.astimezone(zone).replace(tzinfo=None)
    first = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if request.period == "week":
        first -= timedelta(days=first.weekday())
    elif request.period == "month":
        first = first.replace(day=1)
    starts: list[datetime] = []
    step = 0
    # fold=0: a local midnight that comes twice reads as its first occurrence; one the
    # clocks skip reads with the offset before the change, i.e. as the change itself (in
    # the tz database since 1970 every skip of a midnight starts at it, none from before).
    while (at := _instant(first + _STEPS[request.period] * step, zone)) < request.end:
        if starts and starts[-1] == at:
            starts.pop()  # a day the zone skipped entirely (Samoa's 30 December 2011)
        starts.append(at)
        step += 1
    return starts


def _instant(local: datetime, zone: ZoneInfo) -> datetime:
    """Naive local time ``local`` read in ``zone`` (fold=0), as a real instant of the zone."""
    return local.replace(tzinfo=zone).astimezone(UTC).astimezone(zone)


class Percentiles(NamedTuple):
    """p50 / p90 / p95 of a duration in microseconds (None when nothing was measured).

    A named tuple, not a dataclass: a report builds four per row, and tuples of
    numbers cost a third as much to make and nothing to the garbage collector."""

    p50: float | None
    p90: float | None
    p95: float | None

    @classmethod
    def of(cls, values: list[float] | None) -> Percentiles:
        return cls(*values) if values else NONE_MEASURED


NONE_MEASURED: Final = Percentiles(None, None, None)


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One group of a report (keys not grouped by are None)."""

    workflow: str | None
    state: str | None
    slot: str | None
    audience: str | None
    holder: str | None
    priority: int | None
    #: The period's first instant (``period_starts``: its local midnight), in the zone.
    period_start: datetime | None
    opened: int
    met: int
    breached: int
    still_open: int
    at_risk_now: int
    breached_now: int
    pickup_business: Percentiles
    pickup_real: Percentiles
    completion_business: Percentiles
    completion_real: Percentiles
    #: Wall-clock lead time of the group's slots (opened -> satisfied, cancelled or now), summed.
    lead_us: int
    #: The part of it a slot was held by someone (claimed); the rest waited.
    worked_us: int
    #: The definition version of the group's runs (VERSION; None when not grouped by it).
    version: int | None = None

    @property
    def breach_rate(self) -> float | None:
        """Breached among the slots whose milestone was decided (met or breached)."""
        decided = self.met + self.breached
        return self.breached / decided if decided else None

    @property
    def waiting_us(self) -> int:
        return self.lead_us - self.worked_us


def seconds(us: float | None) -> float | None:
    """Microseconds as seconds (None stays None)."""
    return None if us is None else us / 1_000_000


def duration_text(us: float | None, kind: str) -> str | None:
    """``3h 20m business time`` / ``2d 4h real time``; kinds are never mixed in one text."""
    if us is None:
        return None
    text = durations.words(round(us / 1_000_000), seconds_with_hours=False, zero="0s")
    return f"{text} {kind} time"


def percent_text(rate: float | None) -> str:
    """``12.5 %``, or a dash when there is nothing to rate."""
    return "-" if rate is None else f"{rate * 100:.1f} %"
