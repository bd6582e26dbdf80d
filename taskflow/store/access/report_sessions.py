"""Report page sessions (table ``report_session``): keyed by the SHA-256 of the cookie value."""

from __future__ import annotations

from datetime import datetime

from taskflow.store.common import db, sql

#: The statements of ``access/report_sessions.sql``.
SQL = sql.statements("access/report_sessions")


async def create(
    conn: db.Connection, id_hash: str, principal_id: str, now: datetime, expires_at: datetime
) -> None:
    """Store a new session; ``id_hash`` is the SHA-256 of the value the cookie holds."""
    await conn.execute(
        SQL["create"],
        id_hash,
        principal_id,
        now,
        expires_at,
    )


async def live_principal(conn: db.Connection, id_hash: str, now: datetime) -> str | None:
    """The principal of a session that is neither revoked nor expired at ``now``."""
    value = await conn.fetchval(
        SQL["live_principal"],
        id_hash,
        now,
    )
    return None if value is None else str(value)


async def revoke(conn: db.Connection, id_hash: str, now: datetime) -> bool:
    """Revoke one session (sign-out); True when a live one was revoked."""
    status = await conn.execute(
        SQL["revoke"],
        id_hash,
        now,
    )
    return str(status).endswith(" 1")


async def revoke_all(conn: db.Connection, principal_id: str, now: datetime) -> int:
    """Revoke every live session of a principal (deactivation, "sign out everywhere")."""
    status = await conn.execute(
        SQL["revoke_all"],
        principal_id,
        now,
    )
    return int(str(status).rsplit(" ", 1)[-1])


async def delete_ended(conn: db.Connection, before: datetime) -> int:
    """Forget sessions that expired or were revoked before ``before`` (housekeeping)."""
    status = await conn.execute(SQL["delete_ended"], before)
    return int(str(status).rsplit(" ", 1)[-1])
