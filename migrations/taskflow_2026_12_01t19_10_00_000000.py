"""Metrics: the worker's gauge snapshot, and the oldest open slot from an index.

``metric_snapshot`` holds, per name, the gauges a worker computes every few
seconds over live slots and their clocks (``service/reports/metrics.py``); ``/metrics``
reads that one row instead of aggregating at scrape time. ``slot_open_opened_at``
answers "the oldest open slot" with one index probe.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T19:10:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "metric snapshot table; open slots by opening instant index"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw(
            "CREATE TABLE metric_snapshot (name VARCHAR(50) PRIMARY KEY NOT NULL DEFAULT '', "
            "taken_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP, "
            "body JSONB NOT NULL DEFAULT '{{}}')"
        )
        await _Raw.raw(
            "CREATE INDEX slot_open_opened_at ON slot (opened_at) WHERE status = 'open'"
        )

    async def drop() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS slot_open_opened_at")
        await _Raw.raw("DROP TABLE IF EXISTS metric_snapshot")

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
