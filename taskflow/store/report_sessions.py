"""Report page sessions (table ``report_session``): keyed by the SHA-256 of the cookie value."""

from __future__ import annotations

from datetime import datetime

from taskflow.store import db


async def create(
    conn: db.Connection, id_hash: str, principal_id: str, now: datetime, expires_at: datetime
) -> None:
    """Store a new session; ``id_hash`` is the SHA-256 of the value the cookie holds."""
    await conn.execute(
        "INSERT INTO report_session (id, principal, created_at, expires_at) "
        "VALUES ($1, $2, $3, $4)",
        id_hash,
        principal_id,
        now,
        expires_at,
    )


async def live_principal(conn: db.Connection, id_hash: str, now: datetime) -> str | None:
    """The principal of a session that is neither revoked nor expired at ``now``."""
    value = await conn.fetchval(
        "SELECT principal FROM report_session "
        "WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2",
        id_hash,
        now,
    )
    return None if value is None else str(value)


async def revoke(conn: db.Connection, id_hash: str, now: datetime) -> bool:
    """Revoke one session (sign-out); True when a live one was revoked."""
    status = await conn.execute(
        "UPDATE report_session SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
        id_hash,
        now,
    )
    return str(status).endswith(" 1")


async def revoke_all(conn: db.Connection, principal_id: str, now: datetime) -> int:
    """Revoke every live session of a principal (deactivation, "sign out everywhere")."""
    status = await conn.execute(
        "UPDATE report_session SET revoked_at = $2 WHERE principal = $1 AND revoked_at IS NULL",
        principal_id,
        now,
    )
    return int(str(status).rsplit(" ", 1)[-1])


async def delete_ended(conn: db.Connection, before: datetime) -> int:
    """Forget sessions that expired or were revoked before ``before`` (housekeeping)."""
    status = await conn.execute(
        "DELETE FROM report_session WHERE expires_at < $1 OR revoked_at < $1", before
    )
    return int(str(status).rsplit(" ", 1)[-1])
