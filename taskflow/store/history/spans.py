"""State spans (``state_span``, kept by the timeline's trigger in ``spans.sql``) and the
timeline lines a run's history is read from.

Indexes (``schema_extras``): ``state_span_state_during`` (workflow, state, left_at,
entered_at) for "which runs were in S at T" (the spans of S not left by T, from the index
alone),
``state_span_workflow_during`` for ``stateCounts``, ``state_span_open`` (one standing
span per run, what the trigger closes) and ``state_span_line`` (what an undo finds).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from taskflow.core.history import visits
from taskflow.store.common import db, sql

#: The statements of ``history/spans.sql``.
SQL = sql.statements("history/spans")


async def run_lines(conn: db.Connection, run_id: str) -> list[visits.Line]:
    """The lines of a run that change where it is, in order."""
    return _lines(await conn.fetch(SQL["run_lines"], run_id))


async def undo_lines(conn: db.Connection, run_id: str) -> list[visits.Line]:
    """What an undo of the run decides on (``core/history/undo.py``), in order: its entries,
    its moves and the lines after which a change reached beyond it."""
    return (await undo_lines_of_runs(conn, [run_id]))[run_id]


async def undo_lines_of_runs(
    conn: db.Connection, run_ids: Sequence[str]
) -> dict[str, list[visits.Line]]:
    """:func:`undo_lines` of many runs in one statement (every id a key, maybe empty)."""
    rows = await conn.fetch(SQL["undo_lines"], [uuid.UUID(i) for i in run_ids])
    by_run: dict[str, list[Any]] = {i: [] for i in run_ids}
    for row in rows:
        by_run[str(row["run"])].append(row)
    return {i: _lines(found) for i, found in by_run.items()}


def _lines(rows: list[Any]) -> list[visits.Line]:
    return [
        visits.Line(
            id=r["id"],
            kind=r["kind"],
            at=r["at"],
            actor=r["actor"],
            details=_mapping(r["details"]),
        )
        for r in rows
    ]


def _mapping(value: object) -> dict[str, object]:
    if isinstance(value, str):
        value = json.loads(value)
    return dict(value) if isinstance(value, dict) else {}


async def state_counts(conn: db.Connection, workflow: str, at: datetime) -> list[tuple[str, int]]:
    """(state, runs there at ``at``) of a workflow, by state name."""
    rows = await conn.fetch(SQL["state_counts"], workflow, at)
    return [(r["state"], r["runs"]) for r in rows]


async def backfill(conn: db.Connection) -> None:
    """Spans of the lines written before the trigger existed (the migration's step)."""
    await conn.execute(SQL["backfill"])
    await conn.execute(SQL["backfill_drop_cancelled"])


#: What the migration and the schema declare (``schema_extras``).
FUNCTION = SQL["spans_function"]
TRIGGER = SQL["spans_trigger"]
STATE_AT_RAW = SQL["state_at_raw"]

#: The spans' indexes (the schema's, ``schema_extras``): "which runs were in S at T" from one
#: index, ``stateCounts`` a workflow's, the run's one standing span (with the partition key,
#: as a partitioned unique index must hold it, pinned by the predicate: migration
#: 2026-12-05T02:00), and the span of the line an undo rewinds.
INDEXES: Final = (
    (
        "state_span_state_during",
        "CREATE INDEX state_span_state_during ON state_span "
        "(workflow, state, left_at, entered_at) INCLUDE (run) WHERE undone_by IS NULL",
    ),
    (
        "state_span_workflow_during",
        "CREATE INDEX state_span_workflow_during ON state_span (workflow, left_at, entered_at) "
        "INCLUDE (state) WHERE undone_by IS NULL",
    ),
    (
        "state_span_open",
        "CREATE UNIQUE INDEX state_span_open ON state_span (run, left_at) "
        "WHERE left_at = 'infinity' AND undone_by IS NULL",
    ),
    ("state_span_line", "CREATE INDEX state_span_line ON state_span (run, line)"),
)
