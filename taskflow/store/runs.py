"""Subjects, runs and slots <-> the engine's views (timeline rows: ``timeline.py``).

Statements that carry load (inbox, claim, claim-next, work) are in
:mod:`taskflow.store.queries`; this module holds the plain reads and writes.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core.definition import audience as au
from taskflow.core.runs.model import RunView, SlotView
from taskflow.store import db, subjects


@dataclass(frozen=True)
class RunRow:
    """A run with what the engine does not track (its subject row, keys, times)."""

    view: RunView
    subject: subjects.SubjectRow
    definition_digest: str
    correlation_key: str | None
    idempotency_key: str | None
    started_by: str | None
    started_at: datetime
    updated_at: datetime
    version: int


# -- audiences in columns ------------------------------------------------------------------------


def split_audience(audience: au.Audience) -> tuple[list[str], list[str], list[Any]]:
    """(keys, deny keys, other rules): ``not <key>`` rules become deny keys SQL can check."""
    deny: list[str] = []
    residual: list[Any] = []
    for rule in audience.residual:
        if rule.op == "not" and rule.args[0].op == "key":
            deny.append(rule.args[0].key)
        elif (
            rule.op == "not"
            and rule.args[0].op == "any"
            and all(a.op == "key" for a in rule.args[0].args)
        ):
            deny.extend(a.key for a in rule.args[0].args)
        else:
            residual.append(rule.to_json())
    return sorted(audience.keys), sorted(deny), residual


def join_audience(keys: Sequence[str], deny: Sequence[str], residual: Sequence[Any]) -> au.Audience:
    rules = [au.Rule("not", args=(au.Rule("key", key=k),)) for k in deny]
    rules += [au.Rule.from_json(r) for r in residual]
    return au.Audience(keys=frozenset(keys), residual=tuple(rules))


# -- runs ----------------------------------------------------------------------------------------

_RUN_FIELDS = (
    "id", "workflow", "definition_version", "definition_digest", "state", "status", "visit",
    "correlation_key", "idempotency_key", "started_by", "started_at", "state_entered_at",
    "updated_at", "ended_at", "version", "unmatched_at", "step_results",
)  # fmt: skip
_SUBJECT_COLUMNS = (
    "s.id AS s_id, s.type AS s_type, s.external_id AS s_external_id, "
    "s.attributes AS s_attributes, s.version AS s_version"
)


def run_columns(prefix: str = "") -> str:
    """The run's and its subject's columns (``r`` and ``s``); ``prefix`` renames the run's own,
    for statements that also return a slot's columns of the same names."""
    own = ", ".join(f"r.{c} AS {prefix}{c}" if prefix else f"r.{c}" for c in _RUN_FIELDS)
    return f"{own}, {_SUBJECT_COLUMNS}"


RUN_COLUMNS = run_columns()


def run_from(row: asyncpg.Record, prefix: str = "") -> RunRow:
    """A run read with :func:`run_columns` (the same ``prefix``)."""
    subject = subjects.from_row(row, "s_")
    return RunRow(
        view=RunView(
            id=str(row[f"{prefix}id"]),
            workflow=row[f"{prefix}workflow"],
            definition_version=row[f"{prefix}definition_version"],
            state=row[f"{prefix}state"],
            status=row[f"{prefix}status"],
            visit=row[f"{prefix}visit"],
            subject=subject.attributes,
            state_entered_at=row[f"{prefix}state_entered_at"],
            ended_at=row[f"{prefix}ended_at"],
            unmatched_at=row[f"{prefix}unmatched_at"],
            results=row[f"{prefix}step_results"] or {},
        ),
        subject=subject,
        definition_digest=row[f"{prefix}definition_digest"],
        correlation_key=row[f"{prefix}correlation_key"],
        idempotency_key=row[f"{prefix}idempotency_key"],
        started_by=row[f"{prefix}started_by"],
        started_at=row[f"{prefix}started_at"],
        updated_at=row[f"{prefix}updated_at"],
        version=row[f"{prefix}version"],
    )


async def get_run(conn: db.Connection, run_id: str, *, lock: bool = False) -> RunRow | None:
    """A run and its subject; ``lock`` takes the run's row lock for a decision."""
    try:
        key = uuid.UUID(run_id)
    except ValueError:
        return None
    row = await conn.fetchrow(
        f"SELECT {RUN_COLUMNS} FROM run r JOIN subject s ON s.id = r.subject WHERE r.id = $1"
        + (" FOR NO KEY UPDATE OF r" if lock else ""),
        key,
    )
    return run_from(row) if row else None


#: A subject's live run of a workflow (index ``run_live_per_subject``).
LIVE_RUN_FOR = (
    f"SELECT {RUN_COLUMNS} FROM run r JOIN subject s ON s.id = r.subject "
    "WHERE r.workflow = $1 AND r.subject = $2 AND r.status = 'active'"
)
#: The run a start with this idempotency key made, live or ended (index ``run_subject``).
RUN_BY_IDEMPOTENCY_KEY = (
    f"SELECT {RUN_COLUMNS} FROM run r JOIN subject s ON s.id = r.subject "
    "WHERE r.workflow = $1 AND r.subject = $2 AND r.idempotency_key = $3 "
    "ORDER BY r.started_at DESC LIMIT 1"
)


async def live_run_for(
    conn: db.Connection, workflow: str, subject_id: str, *, lock: bool = False
) -> RunRow | None:
    row = await conn.fetchrow(
        LIVE_RUN_FOR + (" FOR NO KEY UPDATE OF r" if lock else ""),
        workflow,
        uuid.UUID(subject_id),
    )
    return run_from(row) if row else None


async def run_by_idempotency_key(
    conn: db.Connection, workflow: str, subject_id: str, key: str
) -> RunRow | None:
    """The run a start with this idempotency key made, live or ended."""
    row = await conn.fetchrow(RUN_BY_IDEMPOTENCY_KEY, workflow, uuid.UUID(subject_id), key)
    return run_from(row) if row else None


#: The live runs of a subject, locked, oldest first (index ``run_subject``).
LIVE_RUNS_OF_SUBJECT = (
    "SELECT id, started_at FROM run WHERE subject = $1 AND status = 'active' "
    "ORDER BY id FOR NO KEY UPDATE"
)
#: The live runs an event's correlation key names, of any workflow (``run_correlation_key``).
RUNS_BY_CORRELATION = (
    "SELECT id FROM run WHERE correlation_key = $1 AND status = 'active' ORDER BY started_at, id"
)


async def live_runs_of_subject(conn: db.Connection, subject_id: str) -> list[str]:
    """The subject's live runs, locked in id order (the lock order); oldest first."""
    rows = await conn.fetch(LIVE_RUNS_OF_SUBJECT, uuid.UUID(subject_id))
    return [str(r["id"]) for r in sorted(rows, key=lambda r: (r["started_at"], r["id"]))]


async def runs_by_correlation(conn: db.Connection, key: str) -> list[str]:
    rows = await conn.fetch(RUNS_BY_CORRELATION, key)
    return [str(r["id"]) for r in rows]


async def insert_run(
    conn: db.Connection,
    view: RunView,
    *,
    subject_id: str,
    digest: str,
    correlation_key: str | None,
    idempotency_key: str | None,
    started_by: str | None,
    now: datetime,
) -> None:
    await conn.execute(
        """
        INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state,
                         status, visit, correlation_key, idempotency_key, started_by, started_at,
                         state_entered_at, updated_at, ended_at, version, unmatched_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $12, $14, 1, $15)
        """,
        uuid.UUID(view.id),
        view.workflow,
        view.definition_version,
        digest,
        uuid.UUID(subject_id),
        view.state,
        view.status,
        view.visit,
        correlation_key,
        idempotency_key,
        started_by,
        now,
        view.state_entered_at,
        view.ended_at,
        view.unmatched_at,
    )


# -- slots ---------------------------------------------------------------------------------------

SLOT_COLUMNS = """
    id, run, visit, state, name, waits_for, item_index, item, label, status, holder,
    audience, deny, residual, delegates, delegates_deny, delegates_residual, priority,
    due_at, payload, workflow, version, created_at, opened_at, claimed_at, satisfied_at,
    satisfied_by, cancelled_at, updated_at, picked_at, held_us, held_since
"""


def slot_from(row: asyncpg.Record) -> SlotView:
    return SlotView(
        id=str(row["id"]),
        run_id=str(row["run"]),
        visit=row["visit"],
        state=row["state"],
        name=row["name"],
        waits_for=row["waits_for"],
        status=row["status"],
        audience=join_audience(row["audience"], row["deny"], row["residual"]),
        delegates=join_audience(row["delegates"], row["delegates_deny"], row["delegates_residual"]),
        priority=row["priority"],
        label=row["label"],
        version=row["version"],
        item_index=row["item_index"],
        item=row["item"],
        holder=row["holder"],
        payload=row["payload"],
        opened_at=row["opened_at"],
        claimed_at=row["claimed_at"],
        satisfied_at=row["satisfied_at"],
        satisfied_by=row["satisfied_by"],
        cancelled_at=row["cancelled_at"],
        picked_at=row["picked_at"],
        held_us=row["held_us"],
        held_since=row["held_since"],
    )


async def slots_of_run(conn: db.Connection, run_id: str) -> list[SlotView]:
    rows = await conn.fetch(
        f"SELECT {SLOT_COLUMNS} FROM slot WHERE run = $1 ORDER BY visit, name, item_index, id",
        uuid.UUID(run_id),
    )
    return [slot_from(r) for r in rows]


async def slots_of_runs(conn: db.Connection, run_ids: Sequence[str]) -> dict[str, list[SlotView]]:
    """Every slot of many runs in one query, by run id (per-request access checks)."""
    rows = await conn.fetch(
        f"SELECT {SLOT_COLUMNS} FROM slot WHERE run = ANY($1::uuid[]) "
        "ORDER BY run, visit, name, item_index, id",
        [uuid.UUID(i) for i in run_ids],
    )
    found: dict[str, list[SlotView]] = {i: [] for i in run_ids}
    for r in rows:
        slot = slot_from(r)
        found.setdefault(slot.run_id, []).append(slot)
    return found


async def get_slot(conn: db.Connection, slot_id: str, *, lock: bool = False) -> SlotView | None:
    """A slot; ``lock`` takes its row lock (after its run's, in the lock order)."""
    try:
        key = uuid.UUID(slot_id)
    except ValueError:
        return None
    row = await conn.fetchrow(
        f"SELECT {SLOT_COLUMNS} FROM slot WHERE id = $1" + (" FOR UPDATE" if lock else ""), key
    )
    return slot_from(row) if row else None


def _audience_columns(view: SlotView) -> tuple[Any, ...]:
    """audience, deny, residual, delegates, delegates_deny, delegates_residual."""
    return (*split_audience(view.audience), *split_audience(view.delegates))


def _slot_args(view: SlotView, workflow: str, now: datetime) -> tuple[Any, ...]:
    return (
        uuid.UUID(view.id),
        uuid.UUID(view.run_id),
        view.visit,
        view.state,
        view.name,
        view.waits_for,
        view.item_index,
        view.item,  # the jsonb codec encodes it; None stays SQL NULL
        view.label,
        view.status,
        view.holder,
        *_audience_columns(view),
        view.priority,
        dict(view.payload) if view.payload is not None else None,
        workflow,
        view.version,
        view.opened_at,
        view.claimed_at,
        view.satisfied_at,
        view.satisfied_by,
        view.cancelled_at,
        now,
        view.picked_at,
        view.held_us,
        view.held_since,
    )


async def insert_slots(
    conn: db.Connection, views: Iterable[SlotView], workflow: str, now: datetime
) -> None:
    await conn.executemany(
        """
        INSERT INTO slot (id, run, visit, state, name, waits_for, item_index, item, label, status,
                          holder, audience, deny, residual, delegates, delegates_deny,
                          delegates_residual, priority, payload, workflow, version, opened_at,
                          claimed_at, satisfied_at, satisfied_by, cancelled_at, created_at,
                          updated_at, picked_at, held_us, held_since)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $27, $28, $29, $30)
        """,
        [_slot_args(v, workflow, now) for v in views],
    )


async def update_slots(conn: db.Connection, views: Iterable[SlotView], now: datetime) -> None:
    """Write slots a decision changed (the run's row lock serialises decisions)."""
    rows = []
    for view in views:
        rows.append(
            (
                uuid.UUID(view.id),
                view.status,
                view.holder,
                *_audience_columns(view),
                view.priority,
                dict(view.payload) if view.payload is not None else None,
                view.label,
                view.version,
                view.opened_at,
                view.claimed_at,
                view.satisfied_at,
                view.satisfied_by,
                view.cancelled_at,
                now,
                view.picked_at,
                view.held_us,
                view.held_since,
            )
        )
    await conn.executemany(
        """
        UPDATE slot SET status = $2, holder = $3, audience = $4, deny = $5, residual = $6,
                        delegates = $7, delegates_deny = $8, delegates_residual = $9,
                        priority = $10, payload = $11, label = $12, version = $13,
                        opened_at = $14, claimed_at = $15, satisfied_at = $16,
                        satisfied_by = $17, cancelled_at = $18, updated_at = $19,
                        picked_at = $20, held_us = $21, held_since = $22
        WHERE id = $1
        """,
        rows,
    )


async def get_runs(conn: db.Connection, run_ids: Sequence[str]) -> dict[str, RunRow]:
    """Many runs by id in one query."""
    found = await conn.fetch(
        f"SELECT {RUN_COLUMNS} FROM run r JOIN subject s ON s.id = r.subject "
        "WHERE r.id = ANY($1::uuid[])",
        [uuid.UUID(i) for i in run_ids],
    )
    return {str(r["id"]): run_from(r) for r in found}
