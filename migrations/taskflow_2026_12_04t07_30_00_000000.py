"""sla_clock.recomputes: a clock's budget changes mid-run (instant, policy, the budget it
replaced), from which the deadline in force at each instant is derived (docs/sla.md,
"Recompute policies")."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import JSONB
from piccolo.columns.indexes import IndexMethod

ID = "2026-12-04T07:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "sla_clock recomputes"


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    manager.add_column(
        table_class_name="SlaClock",
        tablename="sla_clock",
        column_name="recomputes",
        db_column_name="recomputes",
        column_class_name="JSONB",
        column_class=JSONB,
        params={
            "default": "[]",
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    return manager
