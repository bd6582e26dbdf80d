"""sla_clock.recomputes: a clock's budget changes mid-run, ``[[at, policy, kind, budget_us,
working_days, calendar], ...]`` oldest first, from which the deadline in force at each
instant is derived (docs/sla.md, "Recompute policies"). Existing clocks had none: ``[]``.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T07:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "sla_clock recomputes"


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(
        ID,
        DESCRIPTION,
        ["ALTER TABLE sla_clock ADD COLUMN recomputes jsonb NOT NULL DEFAULT '[]'"],
        ["ALTER TABLE sla_clock DROP COLUMN IF EXISTS recomputes"],
    )
