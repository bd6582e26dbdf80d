"""Timeline rows: the lines a run's history keeps (``audit_event``), written in order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from taskflow.core.runs.model import AuditEntry
from taskflow.store.common import db, sql

#: The statements of ``runs/timeline.sql``.
SQL = sql.statements("runs/timeline")

#: The channel the current act came through when it is not the GraphQL API (``mcp:<client>``
#: for an agent's tool call) and the reason the caller gave, set by ``service/runs/via.py``
#: around the use case. A context variable rather than a parameter: every writer of lines
#: (use cases, the unit of work, the refusal lines) then records them without each use
#: case's signature carrying them.
VIA: ContextVar[tuple[str, str | None] | None] = ContextVar("taskflow_timeline_via", default=None)


async def append_audit(conn: db.Connection, run_id: str, entries: Iterable[AuditEntry]) -> None:
    """Add lines to a run's timeline, in order (one statement)."""
    await append_audits(conn, [(run_id, e) for e in entries])


def audit_arrays(lines: Sequence[tuple[str, AuditEntry]]) -> list[Any]:
    """``(run id, line)`` timeline lines as the two values the statements take: a JSON
    array of ``[run, slot, kind, actor, reason, details]`` each (encoded once, by the
    pool's codec, for the whole batch) and their instants, in the same order."""
    via = VIA.get()
    if via is not None:
        # A line of an act that came another way: its channel in the details, and the
        # caller's reason where the line has none of its own (a claim, a completion).
        channel, why = via
        return [
            [
                [
                    r,
                    e.slot_id or None,
                    e.kind,
                    e.actor,
                    e.reason or why,
                    {**e.details, "via": channel},
                ]
                for r, e in lines
            ],
            [e.at for _, e in lines],
        ]
    return [
        [[r, e.slot_id or None, e.kind, e.actor, e.reason, _details(e.details)] for r, e in lines],
        [e.at for _, e in lines],
    ]


def _details(details: Mapping[str, Any]) -> dict[str, Any]:
    return details if type(details) is dict else dict(details)


async def append_audits(conn: db.Connection, lines: Sequence[tuple[str, AuditEntry]]) -> None:
    """Add ``(run id, line)`` timeline lines of one or many runs, in the order given."""
    if lines:
        await conn.execute(SQL["append_audits"], *audit_arrays(lines))
