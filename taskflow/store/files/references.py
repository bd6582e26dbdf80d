"""Which stored files slots still keep (the retention sweep's question)."""

from __future__ import annotations

from taskflow.store.common import db, sql

SQL = sql.statements("files/references")


async def kept_digests(conn: db.Connection) -> set[str]:
    """The sha256 of every file a live payload keeps (not on a cancelled slot or run)."""
    return {str(r["sha256"]) for r in await conn.fetch(SQL["kept_digests"])}
