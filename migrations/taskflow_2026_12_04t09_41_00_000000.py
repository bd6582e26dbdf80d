"""Principals' working hours and leave (docs/principals.md, "Working hours and leave")."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import JSONB
from piccolo.columns.indexes import IndexMethod

ID = "2026-12-04T09:41:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "principal working hours and leave"


def _params(default, null):
    return {
        "default": default,
        "null": null,
        "primary_key": False,
        "unique": False,
        "index": False,
        "index_method": IndexMethod.btree,
        "choices": None,
        "db_column_name": None,
        "secret": False,
    }


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)
    manager.add_column(
        table_class_name="Principal",
        tablename="principal",
        column_name="working_hours",
        db_column_name="working_hours",
        column_class_name="JSONB",
        column_class=JSONB,
        params=_params(None, True),
        schema=None,
    )
    manager.add_column(
        table_class_name="Principal",
        tablename="principal",
        column_name="leave_spans",
        db_column_name="leave_spans",
        column_class_name="JSONB",
        column_class=JSONB,
        params=_params("[]", False),
        schema=None,
    )
    return manager
