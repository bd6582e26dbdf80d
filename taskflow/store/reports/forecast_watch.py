"""The forecast watch's rows: live slots with their flag, and the flags a pass sets
(``forecast_watch.sql``, table ``slot_forecast``; docs/forecast.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from taskflow.core.reports import forecast, forecast_watch
from taskflow.store.common import db, sql
from taskflow.store.reports.forecast import live_peer

SQL = sql.statements("reports/forecast_watch")


@dataclass(frozen=True)
class LiveSlot:
    """A live slot the watch may forecast: as a peer, its run and name, its flag, and where
    its clock is declared (the run's definition version and the clock's milestone)."""

    peer: forecast.Peer
    run_id: str
    name: str
    watched: forecast_watch.Watched
    version: int
    milestone: str | None


async def live(conn: db.Connection) -> dict[str, LiveSlot]:
    """Every live slot whose clock counts, by id, with its flag."""
    return {
        str(r["id"]): LiveSlot(
            live_peer(r),
            str(r["run"]),
            r["name"],
            forecast_watch.Watched(r["flagged"], r["evaluated_at"]),
            r["version"],
            r["milestone"],
        )
        for r in await conn.fetch(SQL["live"])
    }


async def locked_flags(conn: db.Connection, slot_ids: Sequence[str]) -> dict[str, bool]:
    """The flags of ``slot_ids`` still live, locked to the end of the transaction (a row is
    made for a slot never forecast)."""
    await conn.execute(SQL["ensure"], list(slot_ids))
    return {str(r["slot"]): r["flagged"] for r in await conn.fetch(SQL["lock"], list(slot_ids))}


async def record(
    conn: db.Connection,
    flags: Mapping[str, bool],
    probabilities: Mapping[str, float | None],
    now: datetime,
) -> None:
    """Set each slot's flag and last forecast, read at ``now``."""
    ids = list(flags)
    await conn.execute(
        SQL["record"], ids, [flags[i] for i in ids], [probabilities.get(i) for i in ids], now
    )
