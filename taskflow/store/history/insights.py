"""Workflow insights in SQL: one row per workflow and version, and a workflow's pipeline
(``insights.sql``; docs/insights.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from taskflow.store.common import db, sql

#: The statements of ``history/insights.sql``.
SQL = sql.statements("history/insights")


@dataclass(frozen=True)
class VersionRow:
    """What ``by_version`` reads of one workflow version."""

    workflow: str
    version: int
    live: int
    on_steps: int
    started: int
    finished: int
    cancelled: int
    #: Wall seconds at p50, p95, p99 of the runs completed in the window (None: none).
    end_to_end: tuple[float, ...] | None


@dataclass(frozen=True)
class StateRow:
    """A state of a workflow's pipeline: live runs there, and its visits ended in the window."""

    state: str
    live: int
    samples: int
    #: Wall seconds in the state at p50 and p95 (None: no visit ended in the window).
    took: tuple[float, ...] | None


async def by_version(conn: db.Connection, since: datetime) -> list[VersionRow]:
    """Every workflow version with a run live now or started or ended since ``since``."""
    rows = await conn.fetch(SQL["by_version"], since)
    return [
        VersionRow(
            **{k: r[k] for k in ("workflow", "version", "live", "on_steps", "started")},
            finished=r["finished"],
            cancelled=r["cancelled"],
            end_to_end=tuple(r["end_to_end"]) if r["end_to_end"] is not None else None,
        )
        for r in rows
    ]


async def pipeline(conn: db.Connection, workflow: str, since: datetime) -> list[StateRow]:
    """Each state of ``workflow`` with live runs now or visits ended since ``since``."""
    live = {r["state"]: r["runs"] for r in await conn.fetch(SQL["pipeline_now"], workflow)}
    times = {r["state"]: r for r in await conn.fetch(SQL["pipeline_times"], workflow, since)}
    found = []
    for state in sorted(set(live) | set(times)):
        t = times.get(state)
        found.append(
            StateRow(
                state=state,
                live=live.get(state, 0),
                samples=t["samples"] if t is not None else 0,
                took=tuple(t["took"]) if t is not None else None,
            )
        )
    return found
