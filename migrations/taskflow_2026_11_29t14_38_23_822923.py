from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Boolean
from piccolo.columns.column_types import UUID
from piccolo.columns.column_types import Varchar
from piccolo.columns.indexes import IndexMethod

ID = "2026-11-29T14:38:23:822923"
VERSION = "1.38.0"
DESCRIPTION = "notification recipients: outsiders and link requests"


async def forwards():
    manager = MigrationManager(
        migration_id=ID, app_name="taskflow", description=DESCRIPTION
    )

    manager.add_column(
        table_class_name="Notification",
        tablename="notification",
        column_name="link",
        db_column_name="link",
        column_class_name="UUID",
        column_class=UUID,
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
        table_class_name="Notification",
        tablename="notification",
        column_name="link_requested",
        db_column_name="link_requested",
        column_class_name="Boolean",
        column_class=Boolean,
        params={
            "default": False,
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
        table_class_name="Notification",
        tablename="notification",
        column_name="recipient_email",
        db_column_name="recipient_email",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 320,
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
        table_class_name="Notification",
        tablename="notification",
        column_name="recipient_name",
        db_column_name="recipient_name",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 200,
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

    manager.alter_column(
        table_class_name="Notification",
        tablename="notification",
        column_name="recipient",
        db_column_name="recipient",
        params={"length": 330},
        old_params={"length": 200},
        column_class=Varchar,
        old_column_class=Varchar,
        schema=None,
    )

    return manager
