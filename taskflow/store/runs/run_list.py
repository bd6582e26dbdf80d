"""The ``runs`` list: runs by workflow, version, state, status, subject, correlation key and
start/end windows, newest first, keyset-paged, narrowed to where the caller reads.

Order is ``started_at DESC, id DESC``; the cursor is the last row's (started_at, id).
Indexes (migration 2026-12-01T19:12): ``run_started`` for the unfiltered list and the
start window, ``run_workflow_started`` / ``run_state_started`` for a workflow (and state),
``run_correlation_any`` for a correlation key, ``run_ended`` for the end window; a
subject is found by ``subject_type_external_id_key`` and its runs by ``run_subject``.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from taskflow.core.runs.run_filter import RunFilter, RunReach
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import Statement, with_columns
from taskflow.store.operate import attention
from taskflow.store.runs.runs import RUN_COLUMNS, RunRow, run_from

#: The statements of ``runs/run_list.sql``, their column lists filled.
SQL = with_columns(sql.statements("runs/run_list"), run_columns=RUN_COLUMNS)


def run_filters(st: Statement, f: RunFilter) -> Statement:
    """Add the conditions of ``f`` on run ``r`` to ``st``."""
    st.where_given(
        ("run_workflow", f.workflow),
        ("run_version", f.version),
        ("run_state", f.state),
    )
    if f.status:
        st.where("run_status_in", list(f.status))
    if f.subject_type is not None and f.subject_external_id is not None:
        st.where("run_subject", f.subject_type, f.subject_external_id)
    elif f.subject_type is not None:
        st.where("run_subject_type", f.subject_type)
    elif f.subject_external_id is not None:
        st.where("run_subject_external_id", f.subject_external_id)
    if f.parent is not None:
        st.where("run_parent", uuid.UUID(f.parent))
    st.where_given(
        ("run_correlation_key", f.correlation_key),
        ("run_started_from", f.started_from),
        ("run_started_before", f.started_before),
        ("run_ended_from", f.ended_from),
        ("run_ended_before", f.ended_before),
    )
    if f.state_at is not None:
        state, at = f.state_at
        st.where("run_state_at", f.workflow, state, at, at)
    if f.needs_attention is not None and f.attention_windows is not None:
        flagged = attention.run_ids_sql(
            st.args,
            f.attention_windows,
            workflows=f.attention_workflows,
            reasons=f.attention_reasons,
        )
        name = "run_needs_attention" if f.needs_attention else "run_needs_no_attention"
        st.where_text(st.wrapped(name, flagged))
    return st


def run_reach(st: Statement, reach: RunReach) -> Statement:
    """Add ``(...)``: the runs ``reach`` reads (see ``core.runs.run_filter.RunReach``)."""
    if reach.everywhere:
        return st
    keys = sorted(reach.keys)
    me = reach.principal_id
    through_slot: list[list[tuple[str, tuple[Any, ...]]]] = [
        [("reach_holder", (me,))],
        [("reach_satisfied_by", (me,))],
        [("reach_candidate", (keys, keys))],
        [("reach_delegate", (keys,))],
    ]
    for workflows, teams in reach.teams:
        team: list[tuple[str, tuple[Any, ...]]] = [("reach_team", (sorted(teams),))]
        if workflows is not None:
            team.append(("reach_team_workflow", (sorted(workflows),)))
        through_slot.append(team)
    ways = []
    if reach.workflows:
        ways.append(st.fragment("run_workflow_in", sorted(reach.workflows)))
    ways.append(st.wrapped("run_reached_through_slot", st.any_of(through_slot)))
    return st.where_text("(" + " OR ".join(ways) + ")")


def statements(
    f: RunFilter, reach: RunReach, after: tuple[datetime, str] | None, limit: int
) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
    """(count statement, page statement), each with its parameters (EXPLAINed by a test)."""
    count = run_reach(run_filters(Statement(SQL["runs_count"]), f), reach)
    page = count.copy(SQL["runs_page"]).order("newest")
    if after is not None:
        page.where("run_before_in_start", after[0], uuid.UUID(after[1]))
    return count.build(), page.build(limit=limit)


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
