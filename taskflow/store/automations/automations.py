"""Automations as stored (statements in ``automations/automations.sql``).

The document is kept as written; the service validates it (core.automations.document)
before it is saved or published. ``act_once`` is the exactly-once wall: the worker
writes it in the transaction of the actions, and a second take of the same event finds
the row and does nothing. Lines wait for their decisions in ``automation_line`` (a trigger
queues them as they are written); a line leaves it in the transaction of its decisions.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.store.common import db, sql

SQL = sql.statements("automations/automations")
#: The queue of lines automations listen to, filled by a trigger on audit_event (schema_extras;
#: migration 2026-12-04T18:10 made them).
TABLES = (
    ("automation_line", "CREATE TABLE automation_line (line bigint PRIMARY KEY)"),
    # The actions after a delay node, waiting until due_at (once per automation, enrolling
    # line and action).
    (
        "automation_pending",
        "CREATE TABLE automation_pending ("
        " id bigserial PRIMARY KEY,"
        " automation uuid NOT NULL REFERENCES automation (id) ON DELETE CASCADE,"
        " version integer NOT NULL,"
        " line bigint NOT NULL,"
        " run uuid NOT NULL,"
        " next_action integer NOT NULL,"
        " due_at timestamptz NOT NULL,"
        " created_at timestamptz NOT NULL,"
        " UNIQUE (automation, line, next_action))",
    ),
)
FUNCTIONS = (
    ("automation_trigger_of", SQL["automation_trigger_of_function"]),
    ("automation_lines", SQL["automation_lines_function"]),
)
TRIGGERS = (("audit_event_automations", SQL["automation_lines_trigger"]),)


@dataclass(frozen=True)
class AutomationRow:
    id: str
    workflow: str
    name: str
    status: str
    version: int
    document: Any
    author: str
    created_at: datetime
    updated_at: datetime
    #: Why it stopped acting (its author lost the grant, a loop); empty while it acts.
    attention: str = ""


def _row(row: Mapping[str, Any]) -> AutomationRow:
    return db.record_as(AutomationRow, row)


async def insert(
    conn: db.Connection, *, workflow: str, name: str, document: Any, author: str, now: datetime
) -> str:
    """A new draft; its id."""
    new_id = uuid.uuid4()
    await conn.execute(SQL["automation_insert"], new_id, workflow, name, document, author, now)
    return str(new_id)


async def get(conn: db.Connection, automation_id: str) -> AutomationRow | None:
    """One automation (None for an id that is no uuid or names none)."""
    row = await sql.row_by_id(conn, SQL["automation_get"], automation_id)
    return _row(row) if row is not None else None


async def of_workflow(conn: db.Connection, workflow: str) -> list[AutomationRow]:
    return [_row(r) for r in await conn.fetch(SQL["automations_of"], workflow)]


async def set_status(
    conn: db.Connection, automation_id: str, status: str, *, publish: bool, now: datetime
) -> int:
    """Move it to ``status`` (a new version when publishing); the version it now has."""
    version = await conn.fetchval(
        SQL["automation_status"], uuid.UUID(automation_id), status, publish, now
    )
    return int(version)


async def act_once(
    conn: db.Connection,
    automation_id: str,
    version: int,
    event_key: str,
    outcome: str,
    now: datetime,
    subject: str = "",
    event_at: datetime | None = None,
) -> bool:
    """Record the decision on ``event_key``; False when it was already recorded."""
    got = await conn.fetchval(
        SQL["act_once"],
        uuid.UUID(automation_id),
        version,
        event_key,
        outcome,
        now,
        subject,
        event_at or now,
    )
    return got is not None


async def recorded_lines(
    conn: db.Connection,
    workflow: str,
    since: datetime,
    until: datetime,
    kinds: list[str],
    most: int,
) -> list[Mapping[str, Any]]:
    """Timeline lines of ``workflow``'s runs in ``[since, until]`` of ``kinds``, oldest first."""
    rows = await conn.fetch(SQL["recorded_lines"], workflow, since, until, kinds, most)
    return [dict(r) for r in rows]


async def lock(conn: db.Connection, automation_id: str) -> AutomationRow | None:
    """The automation, locked FOR UPDATE until the transaction ends."""
    row = await sql.row_by_id(conn, SQL["automation_lock"], automation_id)
    return _row(row) if row is not None else None


async def decided(conn: db.Connection, automation_id: str, event_key: str) -> bool:
    return bool(await conn.fetchval(SQL["automation_decided"], uuid.UUID(automation_id), event_key))


async def last_enrolled(conn: db.Connection, automation_id: str, subject: str) -> datetime | None:
    found: datetime | None = await conn.fetchval(
        SQL["automation_last_enrolled"], uuid.UUID(automation_id), subject
    )
    return found


async def flag(
    conn: db.Connection, automation_id: str, why: str, now: datetime, run_id: str
) -> None:
    """It stops acting; needsAttention shows it (AUTOMATION_STOPPED) on ``run_id``."""
    run = uuid.UUID(run_id)
    await conn.execute(SQL["automation_flag"], uuid.UUID(automation_id), why[:500], now, run)


async def last_line(conn: db.Connection, run_id: str) -> int:
    return int(await conn.fetchval(SQL["automation_last_line"], uuid.UUID(run_id)))


async def stamp_lines(
    conn: db.Connection, run_id: str, actor: str, after: int, stamp: Mapping[str, Any]
) -> None:
    await conn.execute(SQL["automation_stamp_lines"], uuid.UUID(run_id), actor, after, stamp)


async def live_slot(conn: db.Connection, run_id: str, name: str) -> str | None:
    found: str | None = await conn.fetchval(SQL["automation_open_slot"], uuid.UUID(run_id), name)
    return found


async def delete(conn: db.Connection, automation_id: str) -> None:
    await conn.execute(SQL["automation_delete"], uuid.UUID(automation_id))


async def queued_lines(conn: db.Connection, most: int) -> list[Mapping[str, Any]]:
    """Up to ``most`` queued lines (locked until the transaction ends), oldest first, with
    their run's ``workflow`` (None: the line is gone)."""
    return [dict(r) for r in await conn.fetch(SQL["automation_queued_lines"], most)]


async def listening(conn: db.Connection, workflows: list[str]) -> list[Mapping[str, Any]]:
    """The published automations (not flagged) of ``workflows``, with their ``trigger`` and
    ``published_at``, in id order."""
    return [dict(r) for r in await conn.fetch(SQL["automations_listening"], workflows)]


async def take_line(conn: db.Connection, line_id: int) -> bool:
    """Lock a queued line for its decisions; False when another worker has it or it is done."""
    return await conn.fetchval(SQL["automation_take_line"], line_id) is not None


async def lines_done(conn: db.Connection, line_ids: list[int]) -> None:
    """The lines' decisions are all made: off the queue (in their transaction)."""
    if line_ids:
        await conn.execute(SQL["automation_lines_done"], line_ids)


async def lines_queued(conn: db.Connection) -> int:
    return int(await conn.fetchval(SQL["automation_lines_queued"]))


async def subject(conn: db.Connection, subject_id: str) -> Mapping[str, Any] | None:
    """A subject's ``type``, ``external_id`` and ``attributes`` (None: no such subject)."""
    found = await sql.row_by_id(conn, SQL["automation_subject"], subject_id)
    return dict(found) if found is not None else None


async def wait_after_delay(
    conn: db.Connection,
    automation_id: str,
    version: int,
    line_id: int,
    run_id: str,
    next_action: int,
    due: datetime,
    now: datetime,
) -> None:
    """The actions from ``next_action`` on wait until ``due`` (in the decision's transaction)."""
    await conn.execute(
        SQL["automation_pending_insert"],
        uuid.UUID(automation_id),
        version,
        line_id,
        uuid.UUID(run_id),
        next_action,
        due,
        now,
    )


async def pending_due(conn: db.Connection, now: datetime, most: int) -> list[int]:
    return [int(r["id"]) for r in await conn.fetch(SQL["automation_pending_due"], now, most)]


async def take_pending(conn: db.Connection, pending_id: int) -> Mapping[str, Any] | None:
    """The waiting actions (locked) with their enrolling line as an event reads it; None when
    another worker has them or they were done."""
    found = await conn.fetchrow(SQL["automation_pending_take"], pending_id)
    return dict(found) if found is not None else None


async def pending_done(conn: db.Connection, pending_id: int) -> None:
    await conn.execute(SQL["automation_pending_done"], pending_id)


async def recheck_pending(conn: db.Connection, pending_id: int, when: datetime) -> None:
    await conn.execute(SQL["automation_pending_recheck"], pending_id, when)


async def post_webhook(
    conn: db.Connection,
    run_id: str,
    actor: str,
    details: Mapping[str, Any],
    now: datetime,
    endpoint_id: str,
) -> int:
    """An ``automation.webhook`` line, its outbox event and a delivery to the endpoint."""
    return int(
        await conn.fetchval(
            SQL["automation_webhook"],
            uuid.UUID(run_id),
            actor,
            details,
            now,
            uuid.UUID(endpoint_id),
        )
    )
