from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import BigInt
from piccolo.columns.column_types import DoublePrecision
from piccolo.columns.column_types import JSONB
from piccolo.columns.column_types import Timestamptz
from piccolo.columns.column_types import Varchar
from piccolo.columns.indexes import IndexMethod

ID = "2026-12-01T06:23:32:680015"
VERSION = "1.38.0"
DESCRIPTION = "slot held facts, time to pickup and report clock of live slots"


async def forwards():
    manager = MigrationManager(
        migration_id=ID, app_name="taskflow", description=DESCRIPTION
    )

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="held_since",
        db_column_name="held_since",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": None,
            "null": True,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="held_us",
        db_column_name="held_us",
        column_class_name="BigInt",
        column_class=BigInt,
        params={
            "default": 0,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="picked_at",
        db_column_name="picked_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": None,
            "null": True,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="pickup_clock",
        db_column_name="pickup_clock",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 20,
            "default": None,
            "null": True,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="sla_breached_at",
        db_column_name="sla_breached_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": None,
            "null": True,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="sla_budget_us",
        db_column_name="sla_budget_us",
        column_class_name="BigInt",
        column_class=BigInt,
        params={
            "default": None,
            "null": True,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="sla_calendar",
        db_column_name="sla_calendar",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 100,
            "default": None,
            "null": True,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="sla_due_at",
        db_column_name="sla_due_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": None,
            "null": True,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="sla_met_at",
        db_column_name="sla_met_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": None,
            "null": True,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="sla_milestone",
        db_column_name="sla_milestone",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 20,
            "default": None,
            "null": True,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="sla_pauses",
        db_column_name="sla_pauses",
        column_class_name="JSONB",
        column_class=JSONB,
        params={
            "default": None,
            "null": True,
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

    manager.add_column(
        table_class_name="Slot",
        tablename="slot",
        column_name="sla_working_days",
        db_column_name="sla_working_days",
        column_class_name="DoublePrecision",
        column_class=DoublePrecision,
        params={
            "default": None,
            "null": True,
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
