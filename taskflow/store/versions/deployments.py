"""The registry of deployed definitions (``deployed_definition``) and live runs per version."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.core.versions import deployments
from taskflow.store.common import db, sql

#: The statements of ``versions/deployments.sql``.
SQL = sql.statements("versions/deployments")

#: One start at a time records definitions (``serve --workers N`` starts several at once).
_LOCK_KEY = 0x7461736B666C6F77  # "taskflow"


@dataclass(frozen=True)
class Row:
    """A recorded definition with its instants."""

    recorded: deployments.Recorded
    first_seen_at: datetime
    last_seen_at: datetime
    drift_allowed_at: datetime | None


async def lock(conn: db.Connection) -> None:
    """Serialize starts that record definitions, until the transaction ends."""
    await conn.execute(SQL["lock"], _LOCK_KEY)


async def recorded(conn: db.Connection) -> list[Row]:
    """Every recorded definition, by name then version."""
    rows = await conn.fetch(SQL["recorded"])
    return [
        Row(
            deployments.Recorded(r["workflow"], r["version"], r["digest"], r["document"]),
            r["first_seen_at"],
            r["last_seen_at"],
            r["drift_allowed_at"],
        )
        for r in rows
    ]


async def live_runs(conn: db.Connection) -> dict[tuple[str, int], int]:
    """How many live runs each (workflow, version) has."""
    rows = await conn.fetch(SQL["live_runs"])
    return {(r["workflow"], r["definition_version"]): r["n"] for r in rows}


async def record(
    conn: db.Connection,
    definition: deployments.Loaded,
    now: datetime,
    *,
    drift_allowed: bool = False,
) -> None:
    """Insert ``definition`` first seen ``now``, or mark it seen again (replacing a drifted
    document when ``drift_allowed``)."""
    document: Mapping[str, Any] = definition.document
    await conn.execute(
        SQL["record"],
        f"{definition.name}@{definition.version}",
        definition.name,
        definition.version,
        definition.digest,
        document,
        now,
        drift_allowed,
    )


async def live_by_state(conn: db.Connection, workflow: str) -> dict[tuple[int, str], int]:
    """How many live runs of ``workflow`` each (version, state) has."""
    rows = await conn.fetch(SQL["live_by_state"], workflow)
    return {(r["definition_version"], r["state"]): r["n"] for r in rows}


async def lock_batch(
    conn: db.Connection, workflow: str, pairs: list[tuple[int, str]], limit: int
) -> list[str]:
    """Lock (run rows first, in id order: the lock order) up to ``limit`` live runs of
    ``workflow`` parked at one of the (version, state) ``pairs``; their ids."""
    rows = await conn.fetch(
        SQL["lock_batch"],
        workflow,
        [v for v, _ in pairs],
        [s for _, s in pairs],
        limit,
    )
    return [str(r["id"]) for r in rows]


async def set_version(
    conn: db.Connection, run_id: str, version: int, digest: str, now: datetime
) -> None:
    """Put a (locked) run on another definition version."""
    await conn.execute(
        SQL["set_version"],
        uuid.UUID(run_id),
        version,
        digest,
        now,
    )
