"""sla_clock.recomputes: a clock's budget changes mid-run, ``[[at, policy, kind, budget_us,
working_days, calendar], ...]`` oldest first, from which the deadline in force at each
instant is derived (docs/sla.md, "Recompute policies"). Existing clocks had none: ``[]``.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-04T07:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "sla_clock recomputes"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def add() -> None:
        await _Raw.raw("ALTER TABLE sla_clock ADD COLUMN recomputes jsonb NOT NULL DEFAULT '[]'")

    async def drop() -> None:
        await _Raw.raw("ALTER TABLE sla_clock DROP COLUMN IF EXISTS recomputes")

    manager.add_raw(add)
    manager.add_raw_backwards(drop)
    return manager
