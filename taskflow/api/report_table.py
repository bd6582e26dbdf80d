"""The report's table: one column list for the HTML page and the CSV export, so they agree.

Durations are hours with two decimals in the CSV (a spreadsheet can sum
them) and the same value as ``2h 30m`` on the page; business and real time
are separate columns, never mixed.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from taskflow.core.reports import reports

HOUR_US = 3600 * 1_000_000
DIMENSION_TITLES = {
    reports.PERIOD: "period",
    reports.WORKFLOW: "workflow",
    reports.VERSION: "version",
    reports.STATE: "state",
    reports.SLOT: "slot",
    reports.AUDIENCE: "team",
    reports.HOLDER: "holder",
    reports.PRIORITY: "priority",
}


@dataclass(frozen=True)
class Column:
    """A measure: its header, its value (a count, a rate, or µs) and how it reads."""

    title: str
    value: Callable[[reports.ReportRow], float | int | None]
    #: count | rate | business | real
    kind: str
    #: The page's column group (``COLUMN_GROUPS``).
    group: str = "counts"

    @property
    def head(self) -> str:
        """The page's header under its group's (``pickup p90 (business h)``: ``p90``)."""
        if self.group in ("pickup", "completion"):
            found = re.match(r"\w+ (p\d\d) \((\w+) h\)", self.title)
            if found is None:
                return self.title
            return found.group(1) if found.group(2) == "business" else f"{found.group(1)} real"
        return self.title.split(",")[0] if self.group == "lead" else self.title


def _p(name: str, which: str) -> Callable[[reports.ReportRow], float | None]:
    def get(row: reports.ReportRow) -> float | None:
        found: float | None = getattr(getattr(row, name), which)
        return found

    return get


COLUMNS: tuple[Column, ...] = (
    Column("opened", lambda r: r.opened, "count"),
    Column("met", lambda r: r.met, "count"),
    Column("breached", lambda r: r.breached, "count"),
    Column("still open", lambda r: r.still_open, "count"),
    Column("breach rate", lambda r: r.breach_rate, "rate"),
    Column("at risk now", lambda r: r.at_risk_now, "count"),
    Column("breached now", lambda r: r.breached_now, "count"),
    Column("pickup p50 (business h)", _p("pickup_business", "p50"), "business", "pickup"),
    Column("pickup p90 (business h)", _p("pickup_business", "p90"), "business", "pickup"),
    Column("pickup p95 (business h)", _p("pickup_business", "p95"), "business", "pickup"),
    Column("pickup p90 (real h)", _p("pickup_real", "p90"), "real", "pickup"),
    Column(
        "completion p50 (business h)", _p("completion_business", "p50"), "business", "completion"
    ),
    Column(
        "completion p90 (business h)", _p("completion_business", "p90"), "business", "completion"
    ),
    Column(
        "completion p95 (business h)", _p("completion_business", "p95"), "business", "completion"
    ),
    Column("completion p90 (real h)", _p("completion_real", "p90"), "real", "completion"),
    # Sums over the row's slots (not a typical slot's time): say so in the header.
    Column("lead time, sum (real h)", lambda r: r.lead_us, "real", "lead"),
    Column("worked, sum (real h)", lambda r: r.worked_us, "real", "lead"),
    Column("waiting, sum (real h)", lambda r: r.waiting_us, "real", "lead"),
)

#: The page's column groups (the ``cols`` query parameter; the CSV has every column).
COLUMN_GROUPS = {
    "counts": "counts and breach rate",
    "pickup": "time to pickup",
    "completion": "time to completion",
    "lead": "lead time, worked, waiting (sums)",
}
#: The page's header over each group's columns.
GROUP_HEADS = {
    "counts": "slots",
    "pickup": "time to pickup (business h; real: wall clock)",
    "completion": "time to completion (business h; real: wall clock)",
    "lead": "sum over the slots (real h)",
}


def header_groups(columns: tuple[Column, ...]) -> list[tuple[str, int]]:
    """(group header, how many columns it spans), in table order."""
    spans: list[tuple[str, int]] = []
    for column in columns:
        head = GROUP_HEADS[column.group]
        if spans and spans[-1][0] == head:
            spans[-1] = (head, spans[-1][1] + 1)
        else:
            spans.append((head, 1))
    return spans


#: The page's columns when the reader picked none: what fits a 1280 px screen.
DEFAULT_GROUPS = ("counts", "pickup", "completion")


def groups_of(asked: list[str] | None) -> list[str]:
    """The known column groups asked for (none known: the default ones)."""
    return [g for g in COLUMN_GROUPS if g in set(asked or ())] or list(DEFAULT_GROUPS)


def columns_of(groups: list[str] | None) -> tuple[Column, ...]:
    """The columns of the named groups, in table order."""
    wanted = set(groups_of(groups))
    return tuple(c for c in COLUMNS if c.group in wanted)


def key_titles(group_by: tuple[str, ...]) -> list[str]:
    """Headers of the key columns, in display order."""
    return [DIMENSION_TITLES[d] for d in reports.DIMENSIONS if d in group_by]


def keys(row: reports.ReportRow, group_by: tuple[str, ...], zone: str) -> list[str]:
    """The row's key cells (a period as the zone's local date)."""
    cells = []
    for d in reports.DIMENSIONS:
        if d not in group_by:
            continue
        if d == reports.PERIOD:
            start = row.period_start
            cells.append(start.astimezone(ZoneInfo(zone)).date().isoformat() if start else "")
            continue
        value = getattr(row, d)
        cells.append("(none)" if value is None else str(value))
    return cells


def label(row: reports.ReportRow, group_by: tuple[str, ...], zone: str) -> str:
    """The row's non-period keys as one label ("all" for a single total row)."""
    found = keys(row, tuple(d for d in group_by if d != reports.PERIOD), zone)
    return " / ".join(found) or "all"


def hours(us: float | int | None) -> str:
    """µs as decimal hours for the CSV ('' when nothing was measured)."""
    return "" if us is None else f"{us / HOUR_US:.2f}"


def cell_text(column: Column, row: reports.ReportRow) -> str:
    """What the page shows in a cell."""
    value = column.value(row)
    if column.kind == "count":
        return str(value)
    if column.kind == "rate":
        return reports.percent_text(None if value is None else float(value))
    text = reports.duration_text(value, column.kind)
    return "-" if text is None else text.rsplit(" ", 2)[0]


def csv_cell(column: Column, row: reports.ReportRow) -> str:
    """What the CSV holds in a cell: plain numbers."""
    value = column.value(row)
    if column.kind == "count":
        return str(value)
    if column.kind == "rate":
        return "" if value is None else f"{float(value):.4f}"
    return hours(value)


def to_csv(rows: list[reports.ReportRow], group_by: tuple[str, ...], zone: str) -> str:
    """The rows as CSV with a header line (RFC 4180, CRLF line ends)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*key_titles(group_by), *(c.title for c in COLUMNS)])
    for row in rows:
        writer.writerow([*keys(row, group_by, zone), *(csv_cell(c, row) for c in COLUMNS)])
    return out.getvalue()
