"""Workflow insights in SQL: one row per workflow and version, a workflow's pipeline and
funnel, breach rates per version (``insights.sql``; docs/insights.md)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core.operate.attention import Windows
from taskflow.store.clocks.business_sql import business_us
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import compose
from taskflow.store.operate import attention

#: The statements of ``history/insights.sql``.
SQL = sql.statements("history/insights")
#: A run's start to end in business µs on its workflow's calendar (``wc``, unnest of $2/$3).
_BUSINESS = business_us("wc.calendar", "r.started_at", "r.ended_at")


@dataclass(frozen=True)
class VersionRow:
    """What ``by_version`` reads of one workflow version."""

    workflow: str
    version: int
    live: int
    on_steps: int
    #: Live runs with an item on the needs-attention list.
    attention: int
    started: int
    finished: int
    cancelled: int
    #: Runs that ended in the window as failures: cancelled, or completed in a terminal
    #: state marked ``failure`` (``State(terminal=True, failure=...)``).
    failed: int
    #: Wall seconds at p50, p95, p99 of the runs completed in the window (None: none).
    end_to_end: tuple[float, ...] | None
    #: The same in business seconds on the workflow's calendar, and how many were measured.
    end_to_end_business: tuple[float, ...] | None
    business_samples: int
    #: Slots with a milestone clock ended in the window, and how many breached it.
    measured: int = 0
    breached: int = 0


@dataclass(frozen=True)
class StateRow:
    """A state of a workflow's pipeline: live runs there, its visits ended in the window,
    and its slots ended in the window."""

    state: str
    live: int
    samples: int
    #: Wall seconds in the state at p50 and p95 (None: no visit ended in the window).
    took: tuple[float, ...] | None
    #: Of those visits, how many returned to the state (the run had been in it before).
    reopened: int
    #: Slots ended in the window, how many were picked up, and how many given back.
    slots: int
    picked: int
    refused: int
    #: Opening to first pickup at p50 and p95: wall and business seconds (None: none).
    pickup: tuple[float, ...] | None
    pickup_business: tuple[float, ...] | None


@dataclass(frozen=True)
class FunnelRow:
    """A state the runs started in the window reached, and where those runs are now."""

    state: str
    reached: int
    live: int
    completed: int
    cancelled: int


def _tuple(value: Any) -> tuple[float, ...] | None:
    return tuple(value) if value is not None else None


async def by_version(
    conn: db.Connection,
    since: datetime,
    calendars: Mapping[str, str | None],
    windows: Windows,
    workflow: str | None = None,
    failures: Collection[tuple[str, int, str]] = (),
) -> list[VersionRow]:
    """Every workflow version with a run live now or started or ended since ``since`` (only
    ``workflow``'s when given: a workflow's page reads no other); business time on
    ``calendars`` (workflow -> calendar), attention as of ``windows``; ``failures``: the
    (workflow, version, state) terminal states a completed run failed in."""
    names = sorted(calendars) if workflow is None else [workflow]
    args: list[Any] = [since, names, [calendars.get(n) for n in names]]
    args += [[f[0] for f in failures], [f[1] for f in failures], [f[2] for f in failures]]
    only = [workflow] if workflow is not None else None
    flagged = attention.run_ids_sql(args, windows, workflows=only, reasons=None)
    narrowed = "AND r.workflow = ANY($2::text[])" if workflow is not None else ""
    statement = compose(SQL["by_version"], business=_BUSINESS, attention=flagged, only=narrowed)
    rows = await conn.fetch(statement, *args)
    rate_args: list[Any] = [since] if workflow is None else [since, workflow]
    rate_only = "AND sl.workflow = $2" if workflow is not None else ""
    rated = await conn.fetch(compose(SQL["breach_rates"], only=rate_only), *rate_args)
    rates = {(r["workflow"], r["version"]): r for r in rated}
    return [_version_row(r, rates.get((r["workflow"], r["version"]))) for r in rows]


def _version_row(r: asyncpg.Record, rate: asyncpg.Record | None) -> VersionRow:
    return VersionRow(
        **{k: r[k] for k in ("workflow", "version", "live", "on_steps", "attention", "started")},
        finished=r["finished"],
        cancelled=r["cancelled"],
        failed=r["failed"],
        end_to_end=_tuple(r["end_to_end"]),
        end_to_end_business=_tuple(r["end_to_end_business"]),
        business_samples=r["business_samples"],
        measured=rate["measured"] if rate is not None else 0,
        breached=rate["breached"] if rate is not None else 0,
    )


async def pipeline(conn: db.Connection, workflow: str, since: datetime) -> list[StateRow]:
    """Each state of ``workflow`` with live runs now, or visits or slots ended since ``since``."""
    live = {r["state"]: r["runs"] for r in await conn.fetch(SQL["pipeline_now"], workflow)}
    times = {r["state"]: r for r in await conn.fetch(SQL["pipeline_times"], workflow, since)}
    slots = {r["state"]: r for r in await conn.fetch(SQL["pipeline_slots"], workflow, since)}
    found = []
    for state in sorted(set(live) | set(times) | set(slots)):
        t, s = times.get(state), slots.get(state)
        found.append(
            StateRow(
                state=state,
                live=live.get(state, 0),
                samples=t["samples"] if t is not None else 0,
                took=_tuple(t["took"]) if t is not None else None,
                reopened=t["reopened"] if t is not None else 0,
                slots=s["slots"] if s is not None else 0,
                picked=s["picked"] if s is not None else 0,
                refused=s["refused"] if s is not None else 0,
                pickup=_tuple(s["pickup"]) if s is not None else None,
                pickup_business=_tuple(s["pickup_business"]) if s is not None else None,
            )
        )
    return found


async def funnel(conn: db.Connection, workflow: str, since: datetime) -> list[FunnelRow]:
    """The states the runs of ``workflow`` started since ``since`` reached, most reached first."""
    rows = await conn.fetch(SQL["funnel"], workflow, since)
    return [db.record_as(FunnelRow, r) for r in rows]
