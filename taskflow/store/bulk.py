"""bulkOperate's runs: the ``runs`` list's filter and reach, counted three ways, and the
runs a verb would touch in (started, id) order.

The conditions are the runs list's builder (``store/run_list.py``); this module adds
the operator's workflows and the verb's precondition (a live run, or a dead timer).
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.core.runs.run_filter import RunFilter, RunReach
from taskflow.store import db, risk_sql, run_list, sql

_SQL = sql.statements("bulk")

#: The verbs' preconditions on run ``r``.
ACTIVE = "r.status = 'active'"
HAS_DEAD_TIMER = "EXISTS (SELECT 1 FROM timer t WHERE t.run = r.id AND t.status = 'dead')"


def _live_clock(paused: bool) -> str:
    """A live run with a live slot whose clock is unmet and (not) paused: what pauseClocks
    (resumeClocks) acts on (``core.runs.operator``), so repeated calls move on."""
    stands = risk_sql.not_paused("k.pauses")
    return (
        f"{ACTIVE} AND EXISTS (SELECT 1 FROM sla_clock k JOIN slot s ON s.id = k.slot "
        "WHERE k.run = r.id AND k.met_at IS NULL "
        "AND s.status IN ('pending', 'open', 'claimed') "
        f"AND {'NOT ' if paused else ''}{stands})"
    )


HAS_RUNNING_CLOCK = _live_clock(paused=False)
HAS_PAUSED_CLOCK = _live_clock(paused=True)


@dataclass(frozen=True)
class Counts:
    """How many runs the filter matches among those the caller reads, how many of them
    lie in workflows the caller operates, and how many of those the verb applies to."""

    matched: int
    operable: int
    applicable: int
    #: Applicable runs after a given one in (started, id) order.
    beyond: int


def _where(f: RunFilter, reach: RunReach, args: list[Any]) -> str:
    return "true" + run_list.filter_sql(f, args) + run_list.reach_sql(reach, args)


def _operable(workflows: frozenset[str] | None, args: list[Any]) -> str:
    if workflows is None:
        return "true"
    return f"r.workflow = ANY({db.placeholder(args, sorted(workflows), '::text[]')})"


async def counts(
    conn: db.Connection,
    *,
    f: RunFilter,
    reach: RunReach,
    workflows: frozenset[str] | None,
    precondition: str,
    beyond: tuple[datetime, str] | None,
) -> Counts:
    """The counts (one statement); ``beyond`` counts the applicable runs after that run."""
    args: list[Any] = []
    where = _where(f, reach, args)
    operable = _operable(workflows, args)
    later = _after(beyond, args)
    row = await conn.fetchrow(
        f"SELECT count(*) AS matched, count(*) FILTER (WHERE {operable}) AS operable, "
        f"count(*) FILTER (WHERE {operable} AND {precondition}) AS applicable, "
        f"count(*) FILTER (WHERE {operable} AND {precondition} AND {later}) AS beyond "
        f"FROM run r WHERE {where}",
        *args,
    )
    assert row is not None
    return Counts(
        int(row["matched"]), int(row["operable"]), int(row["applicable"]), int(row["beyond"])
    )


def _after(run: tuple[datetime, str] | None, args: list[Any]) -> str:
    """Runs after ``run`` (started, id) in the order verbs take them; all for None."""
    if run is None:
        return "true"
    started, run_id = db.placeholder(args, run[0]), db.placeholder(args, uuid.UUID(run[1]))
    return f"(r.started_at, r.id) > ({started}, {run_id})"


async def run_ids(
    conn: db.Connection,
    *,
    f: RunFilter,
    reach: RunReach,
    workflows: frozenset[str] | None,
    precondition: str,
    after: tuple[datetime, str] | None,
    limit: int,
) -> list[tuple[str, datetime]]:
    """Up to ``limit`` (run, started) the verb applies to, oldest first (started, id), after
    the run ``after`` names."""
    args: list[Any] = []
    param = functools.partial(db.placeholder, args)
    where = f"{_where(f, reach, args)} AND {_operable(workflows, args)} AND {precondition}"
    where += f" AND {_after(after, args)}"
    found = await conn.fetch(
        f"SELECT r.id, r.started_at FROM run r WHERE {where} "
        f"ORDER BY r.started_at, r.id LIMIT {param(limit)}",
        *args,
    )
    return [(str(r["id"]), r["started_at"]) for r in found]


async def dead_timers(conn: db.Connection, run_ids: list[str]) -> list[tuple[str, int]]:
    """(run, timer) of the dead timers of ``run_ids``."""
    found = await conn.fetch(_SQL["dead_timers"], [uuid.UUID(r) for r in run_ids])
    return [(str(r["run"]), int(r["id"])) for r in found]
