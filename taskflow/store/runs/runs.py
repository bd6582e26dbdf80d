"""Subjects, runs and slots <-> the engine's views (timeline rows: ``timeline.py``).

Statements that carry load (inbox, claim, work) are in :mod:`taskflow.store.slots.queries`,
claim-next in :mod:`taskflow.store.slots.claims`; this module holds the plain reads and writes
(``runs/runs.sql``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core.definition import audience as au
from taskflow.core.runs.model import RunView, SlotView
from taskflow.core.runs.statuses import RunStatus
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns
from taskflow.store.runs import subjects


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

    @property
    def head(self) -> RunHead:
        """What a slot's answer and the read rule need of this run."""
        v, s = self.view, self.subject
        return RunHead(
            v.id, v.workflow, v.definition_version, v.state, v.status, v.subject, s.type,
            s.external_id,
        )  # fmt: skip


@dataclass(frozen=True)
class RunHead:
    """What a slot's answer (its workflow, version, run state, subject) and the read rule
    (``service/access.may_read``: the run's state, status and subject) need of its run: all
    that claim-next's statement returns of it (``store/slots/claims.py``)."""

    id: str
    workflow: str
    definition_version: int
    state: str
    status: str
    #: The subject's attributes (as ``RunView.subject``).
    subject: Mapping[str, Any]
    subject_type: str
    subject_external_id: str


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
_SUBJECT_FIELDS = ("id", "type", "external_id", "attributes", "version", "gone_at")


#: What ``steps.once`` recorded for the run, by name (read with it: hooks answer from it).
ONCE_COLUMN = (
    "COALESCE((SELECT jsonb_object_agg(o.name, o.result) FROM step_once o "
    "WHERE o.run = r.id), '{}'::jsonb)"
)


def run_columns(prefix: str = "") -> str:
    """The run's and its subject's columns (``r`` and ``s``); ``prefix`` renames the run's own,
    for statements that also return a slot's columns of the same names."""
    own = ", ".join(f"r.{c} AS {prefix}{c}" if prefix else f"r.{c}" for c in _RUN_FIELDS)
    theirs = ", ".join(f"s.{c} AS s_{c}" for c in _SUBJECT_FIELDS)
    return f"{own}, {ONCE_COLUMN} AS {prefix}once_values, {theirs}"


RUN_COLUMNS = run_columns()

#: The columns :func:`view_from` reads (beside ``s.attributes``).
_VIEW_FIELDS = (
    "id", "workflow", "definition_version", "state", "status", "visit", "state_entered_at",
    "ended_at", "unmatched_at", "step_results", "started_at",
)  # fmt: skip


def view_columns(prefix: str = "") -> str:
    """The columns :func:`view_from` needs (``r`` and ``s``), fewer than :func:`run_columns`."""
    own = ", ".join(f"r.{c} AS {prefix}{c}" for c in _VIEW_FIELDS)
    return f"{own}, {ONCE_COLUMN} AS {prefix}once_values, s.attributes AS s_attributes"


def run_from(row: asyncpg.Record, prefix: str = "") -> RunRow:
    """A run read with :func:`run_columns` (the same ``prefix``)."""
    subject = subjects.from_row(row, "s_")
    return db.record_as(RunRow, row, prefix, view=view_from(row, prefix), subject=subject)


def view_from(row: asyncpg.Record, prefix: str = "") -> RunView:
    """The engine's view of a run read with :func:`run_columns` or :func:`view_columns` (the
    same ``prefix``), built field by field (a worker's step batch builds one per step)."""
    return RunView(
        id=str(row[f"{prefix}id"]),
        workflow=row[f"{prefix}workflow"],
        definition_version=row[f"{prefix}definition_version"],
        state=row[f"{prefix}state"],
        status=row[f"{prefix}status"],
        visit=row[f"{prefix}visit"],
        subject=row["s_attributes"],
        state_entered_at=row[f"{prefix}state_entered_at"],
        ended_at=row[f"{prefix}ended_at"],
        unmatched_at=row[f"{prefix}unmatched_at"],
        results=row[f"{prefix}step_results"] or {},
        once=row[f"{prefix}once_values"],
        started_at=row[f"{prefix}started_at"],
        # Read where the statement has it (run_columns); the views of the worker's step batches
        # (view_columns) are of live runs, whose subject is there.
        subject_gone=row.get("s_gone_at") is not None,
    )


async def _by_id(conn: db.Connection, text_id: str, statement: str) -> asyncpg.Record | None:
    """The row ``statement`` reads for the id a caller gave (None when it is no UUID)."""
    key = db.uuid_or_none(text_id)
    return None if key is None else await conn.fetchrow(statement, key)


async def get_run(conn: db.Connection, run_id: str, *, lock: bool = False) -> RunRow | None:
    """A run and its subject; ``lock`` takes the run's row lock for a decision."""
    row = await _by_id(conn, run_id, SQL["get_run_locked"] if lock else SQL["get_run"])
    if lock and row is not None and row["status"] != RunStatus.ACTIVE:
        # The lock waited for the writer that ended the run, and the subject joined to it is as
        # it was before: read again, so a run its subject's deletion ended says so.
        row = await _by_id(conn, run_id, SQL["get_run"])
    return run_from(row) if row else None


async def live_run_for(
    conn: db.Connection, workflow: str, subject_id: str, *, lock: bool = False
) -> RunRow | None:
    text = SQL["live_run_for_locked"] if lock else SQL["live_run_for"]
    row = await conn.fetchrow(text, workflow, uuid.UUID(subject_id))
    return run_from(row) if row else None


async def latest_run_for(conn: db.Connection, workflow: str, subject_id: str) -> RunRow | None:
    """A subject's latest run of a workflow, live or ended."""
    row = await conn.fetchrow(SQL["latest_run_for"], workflow, uuid.UUID(subject_id))
    return run_from(row) if row else None


async def run_by_idempotency_key(
    conn: db.Connection, workflow: str, subject_id: str, key: str
) -> RunRow | None:
    """The run a start with this idempotency key made, live or ended."""
    row = await conn.fetchrow(SQL["run_by_idempotency_key"], workflow, uuid.UUID(subject_id), key)
    return run_from(row) if row else None


async def live_runs_of_subject(
    conn: db.Connection, subject_id: str, *, scheduled: bool = False
) -> list[str]:
    """The subject's live runs (``scheduled``: and its delayed starts), locked in id order (the
    lock order); oldest first."""
    statement = SQL["unended_runs_of_subject"] if scheduled else SQL["live_runs_of_subject"]
    rows = await conn.fetch(statement, uuid.UUID(subject_id))
    return [str(r["id"]) for r in sorted(rows, key=lambda r: (r["started_at"], r["id"]))]


async def runs_by_correlation(conn: db.Connection, key: str) -> list[str]:
    rows = await conn.fetch(SQL["runs_by_correlation"], key)
    return [str(r["id"]) for r in rows]


@dataclass(frozen=True)
class NewRun:
    """A run to insert (:func:`insert_runs`): the engine's view of its start and its columns."""

    view: RunView
    subject_id: str
    digest: str
    correlation_key: str | None
    idempotency_key: str | None
    started_by: str | None
    #: Its version once its start is written: 1, plus one for each decision of its start
    #: (what the start's writes would otherwise bump it by in a second statement).
    version: int = 1


async def insert_runs(conn: db.Connection, runs: Sequence[NewRun], now: datetime) -> None:
    """Insert runs started at ``now``, in the order given (one statement)."""
    if not runs:
        return
    views = [r.view for r in runs]
    await conn.execute(
        SQL["insert_runs"],
        [uuid.UUID(v.id) for v in views],
        *db.columns(views, "workflow", "definition_version"),
        [r.digest for r in runs],
        [uuid.UUID(r.subject_id) for r in runs],
        [v.state for v in views],
        [str(v.status) for v in views],
        [v.visit for v in views],
        *db.columns(runs, "correlation_key", "idempotency_key", "started_by"),
        now,
        *db.columns(views, "state_entered_at", "ended_at", "unmatched_at"),
        [r.version for r in runs],
        [json.dumps(dict(v.results)) for v in views],
    )


async def live_runs_for_many(
    conn: db.Connection, pairs: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], tuple[str, str]]:
    """The live runs (started or scheduled) of these (workflow, subject id) pairs, as
    :func:`live_run_for` finds one: (workflow, subject id) to (run id, its state)."""
    if not pairs:
        return {}
    found = await conn.fetch(
        SQL["live_runs_for_many"], [w for w, _ in pairs], [uuid.UUID(s) for _, s in pairs]
    )
    return {(r["workflow"], str(r["subject"])): (str(r["id"]), r["state"]) for r in found}


# -- slots ---------------------------------------------------------------------------------------

SLOT_COLUMNS = """
    id, run, visit, state, name, waits_for, item_index, item, label, status, holder,
    audience, deny, residual, delegates, delegates_deny, delegates_residual, priority,
    due_at, payload, workflow, version, created_at, opened_at, claimed_at, satisfied_at,
    satisfied_by, cancelled_at, updated_at, picked_at, held_us, held_since
"""

#: The statements of ``runs/runs.sql``, their column lists filled.
SQL = with_columns(sql.statements("runs/runs"), run_columns=RUN_COLUMNS, slot_columns=SLOT_COLUMNS)


def slot_from(row: asyncpg.Record) -> SlotView:
    return db.record_as(
        SlotView,
        row,
        columns=db.REFERENCES,
        audience=join_audience(row["audience"], row["deny"], row["residual"]),
        delegates=join_audience(row["delegates"], row["delegates_deny"], row["delegates_residual"]),
    )


async def slots_of_run(conn: db.Connection, run_id: str) -> list[SlotView]:
    rows = await conn.fetch(SQL["slots_of_run"], uuid.UUID(run_id))
    return [slot_from(r) for r in rows]


async def slots_of_runs(conn: db.Connection, run_ids: Sequence[str]) -> dict[str, list[SlotView]]:
    """Every slot of many runs in one query, by run id (per-request access checks)."""
    rows = await conn.fetch(SQL["slots_of_runs"], [uuid.UUID(i) for i in run_ids])
    found: dict[str, list[SlotView]] = {i: [] for i in run_ids}
    for r in rows:
        slot = slot_from(r)
        found.setdefault(slot.run_id, []).append(slot)
    return found


async def get_slot(conn: db.Connection, slot_id: str, *, lock: bool = False) -> SlotView | None:
    """A slot; ``lock`` takes its row lock (after its run's, in the lock order)."""
    row = await _by_id(conn, slot_id, SQL["get_slot_locked"] if lock else SQL["get_slot"])
    return slot_from(row) if row else None


def _audience_columns(view: SlotView) -> tuple[Any, ...]:
    """audience, deny, residual, delegates, delegates_deny, delegates_residual."""
    return (*split_audience(view.audience), *split_audience(view.delegates))


def _changed_columns(view: SlotView, now: datetime) -> tuple[Any, ...]:
    """What a decision may change of a slot, in update_slot's order (insert_slot's tail)."""
    return (
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
        workflow,
        *_changed_columns(view, now),
    )


async def insert_slots(
    conn: db.Connection, views: Iterable[SlotView], workflow: str, now: datetime
) -> None:
    await conn.executemany(
        SQL["insert_slot"],
        [_slot_args(v, workflow, now) for v in views],
    )


async def update_slots(conn: db.Connection, views: Iterable[SlotView], now: datetime) -> None:
    """Write slots a decision changed (the run's row lock serialises decisions)."""
    rows = [(uuid.UUID(view.id), *_changed_columns(view, now)) for view in views]
    await conn.executemany(
        SQL["update_slot"],
        rows,
    )


async def get_runs_locked(conn: db.Connection, run_ids: Sequence[str]) -> dict[str, RunRow]:
    """Many runs by id, their rows locked in id order; in that order."""
    found = await conn.fetch(SQL["get_runs_locked"], [uuid.UUID(i) for i in run_ids])
    return {str(r["id"]): run_from(r) for r in found}


async def get_runs(conn: db.Connection, run_ids: Sequence[str]) -> dict[str, RunRow]:
    """Many runs by id in one query."""
    found = await conn.fetch(SQL["get_runs"], [uuid.UUID(i) for i in run_ids])
    return {str(r["id"]): run_from(r) for r in found}
