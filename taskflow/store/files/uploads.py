"""Who uploaded which stored file: a ``complete`` may carry only its own caller's uploads."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from taskflow.store.common import db, sql

SQL = sql.statements("files/uploads")
#: The table: one row per uploader and file (declared here, created by migration 16:50).
TABLE = (
    "file_upload",
    "CREATE TABLE file_upload ("
    " sha256 text NOT NULL,"
    " uploader text NOT NULL,"
    " uploaded_at timestamptz NOT NULL,"
    " PRIMARY KEY (uploader, sha256))",
)


async def record(conn: db.Connection, digests: Iterable[str], uploader: str, at: datetime) -> None:
    """``uploader`` (``principal:<id>`` or ``link:<id>``) uploaded the files ``digests``."""
    await conn.execute(SQL["record"], sorted(set(digests)), uploader, at)


async def uploaded_by(conn: db.Connection, uploader: str, digests: Iterable[str]) -> set[str]:
    """Which of ``digests`` ``uploader`` uploaded."""
    rows = await conn.fetch(SQL["uploaded_by"], uploader, sorted(set(digests)))
    return {str(r["sha256"]) for r in rows}


async def forget_before(conn: db.Connection, before: datetime) -> int:
    """Forget uploads older than ``before``; how many rows went."""
    done = await conn.execute(SQL["forget_before"], before)
    return int(done.split()[-1])
