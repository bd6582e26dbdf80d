"""``taskflow measure-slots`` stores the measures of slots that ended before they were kept."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from taskflow import cli
from taskflow.store.common import db
from tests import reports_dataset as ds
from tests.conftest import TEST_SECRET


def test_measure_slots_once_after_upgrading(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def load() -> None:
        database = await db.Database.connect(database_url, min_size=1, max_size=1)
        try:
            async with database.transaction() as conn:
                await ds.load(conn)
        finally:
            await database.close()

    async def measured() -> list[tuple[str, str]]:
        conn = await asyncpg.connect(database_url)
        try:
            rows = await conn.fetch(
                "SELECT name, coalesce(measured_clock, 'pickup ' || pickup_clock) AS clock "
                "FROM slot WHERE measured_clock IS NOT NULL OR pickup_clock IS NOT NULL "
                "ORDER BY opened_at"
            )
        finally:
            await conn.close()
        return [(r["name"], r["clock"]) for r in rows]

    asyncio.run(load())
    monkeypatch.setenv("TASKFLOW_DATABASE_URL", database_url)
    monkeypatch.setenv("TASKFLOW_SECRET_KEYS", TEST_SECRET)
    assert cli.main(["measure-slots"]) == 0
    # Four ended slots, and S4's time to pickup (claimed before it was kept, still held).
    assert "5 slots measured" in capsys.readouterr().out
    assert asyncio.run(measured()) == [
        ("finance_review", "finished"),
        ("payment", "finished"),
        ("finance_review", "finished"),
        ("legal_review", ""),
        ("manager_approval", "pickup finished"),
    ]
    assert cli.main(["measure-slots"]) == 0
    assert "0 slots measured" in capsys.readouterr().out
