"""The ``runs`` list: runs by workflow, version, state, status, subject, correlation key and
start/end windows, newest first, keyset-paged, narrowed to where the caller reads.

Order is ``started_at DESC, id DESC``; the cursor is the last row's (started_at, id).
Indexes (migration 2026-12-01T19:12): ``run_started`` for the unfiltered list and the
start window, ``run_workflow_started`` / ``run_state_started`` for a workflow (and state),
``run_correlation_any`` for a correlation key, ``run_ended`` for the end window; a
subject is found by ``subject_type_external_id_key`` and its runs by ``run_subject``.
"""

from __future__ import annotations

import functools
import uuid
from datetime import datetime
from typing import Any

from taskflow.core.runs.run_filter import RunFilter, RunReach
from taskflow.store import attention, db
from taskflow.store.runs import RUN_COLUMNS, RunRow, run_from


def filter_sql(f: RunFilter, args: list[Any]) -> str:
    """`` AND ...`` conditions of ``f`` on run ``r`` (parameters appended to ``args``)."""
    param = functools.partial(db.placeholder, args)
    parts = []
    if f.workflow is not None:
        parts.append(f"r.workflow = {param(f.workflow)}")
    if f.version is not None:
        parts.append(f"r.definition_version = {param(f.version)}")
    if f.state is not None:
        parts.append(f"r.state = {param(f.state)}")
    if f.status:
        parts.append(f"r.status = ANY({param(list(f.status), '::text[]')})")
    if f.subject_type is not None or f.subject_external_id is not None:
        sub = ["true"]
        if f.subject_type is not None:
            sub.append(f"sx.type = {param(f.subject_type)}")
        if f.subject_external_id is not None:
            sub.append(f"sx.external_id = {param(f.subject_external_id)}")
        parts.append(f"r.subject IN (SELECT sx.id FROM subject sx WHERE {' AND '.join(sub)})")
    if f.correlation_key is not None:
        parts.append(
            f"r.correlation_key = {param(f.correlation_key)} AND r.correlation_key IS NOT NULL"
        )
    if f.started_from is not None:
        parts.append(f"r.started_at >= {param(f.started_from)}")
    if f.started_before is not None:
        parts.append(f"r.started_at < {param(f.started_before)}")
    if f.ended_from is not None:
        parts.append(f"r.ended_at >= {param(f.ended_from)} AND r.ended_at IS NOT NULL")
    if f.ended_before is not None:
        parts.append(f"r.ended_at < {param(f.ended_before)} AND r.ended_at IS NOT NULL")
    if f.needs_attention is not None and f.attention_windows is not None:
        flagged = attention.run_ids_sql(
            args,
            f.attention_windows,
            workflows=f.attention_workflows,
            reasons=f.attention_reasons,
        )
        parts.append(f"r.id {'' if f.needs_attention else 'NOT '}IN ({flagged})")
    return "".join(f" AND {p}" for p in parts)


def reach_sql(reach: RunReach, args: list[Any]) -> str:
    """`` AND (...)``: the runs ``reach`` reads (see ``core.runs.run_filter.RunReach``)."""
    if reach.everywhere:
        return ""
    param = functools.partial(db.placeholder, args)
    keys = param(sorted(reach.keys), "::text[]")
    me = param(reach.principal_id)
    through_slot = [
        f"x.holder = {me}",
        f"x.satisfied_by = {me}",
        f"(x.audience && {keys} AND NOT x.deny && {keys})",
        f"x.delegates && {keys}",
    ]
    for workflows, teams in reach.teams:
        team = f"x.audience && {param(sorted(teams), '::text[]')}"
        if workflows is not None:
            team += f" AND x.workflow = ANY({param(sorted(workflows), '::text[]')})"
        through_slot.append(f"({team})")
    ways = [f"EXISTS (SELECT 1 FROM slot x WHERE x.run = r.id AND ({' OR '.join(through_slot)}))"]
    if reach.workflows:
        ways.insert(0, f"r.workflow = ANY({param(sorted(reach.workflows), '::text[]')})")
    return " AND (" + " OR ".join(ways) + ")"


def statements(
    f: RunFilter, reach: RunReach, after: tuple[datetime, str] | None, limit: int
) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
    """(count statement, page statement), each with its parameters (EXPLAINed by a test)."""
    args: list[Any] = []
    where = "true" + filter_sql(f, args) + reach_sql(reach, args)
    count = (f"SELECT count(*) FROM run r WHERE {where}", list(args))
    if after is not None:
        started = db.placeholder(args, after[0])
        run_id = db.placeholder(args, uuid.UUID(after[1]))
        where += f" AND (r.started_at, r.id) < ({started}, {run_id})"
    page = (
        f"SELECT {RUN_COLUMNS} FROM run r JOIN subject s ON s.id = r.subject WHERE {where} "
        f"ORDER BY r.started_at DESC, r.id DESC LIMIT {int(limit)}",
        args,
    )
    return count, page


async def runs(
    conn: db.Connection,
    *,
    f: RunFilter,
    reach: RunReach,
    after: tuple[datetime, str] | None,
    limit: int,
) -> tuple[list[RunRow], int]:
    """A page of matching runs, newest first, and how many match in all."""
    (count_sql, count_args), (page_sql, page_args) = statements(f, reach, after, limit)
    total = await conn.fetchval(count_sql, *count_args)
    rows = await conn.fetch(page_sql, *page_args)
    return [run_from(r) for r in rows], int(total)
