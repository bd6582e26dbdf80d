"""Buffered events, and an index for every lookup an event or a subject makes.

``event_buffer`` keeps events that arrived before a slot waited for them (see
docs/runs-and-slots.md, "Events"). ``run_subject`` serves the runs of a
subject (``raiseEvent`` by subject, ``updateSubject``); ``run_correlation_key``
the correlation lookup, which knows no workflow (the older
``run_correlation`` leads with the workflow, so it could not serve it);
``audit_event_idempotency`` the ``raiseEvent`` idempotency-key lookup.
The raw steps run before the table is added (Piccolo's order); none needs it.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.base import OnDelete
from piccolo.columns.base import OnUpdate
from piccolo.columns.column_types import BigSerial
from piccolo.columns.column_types import ForeignKey
from piccolo.columns.column_types import JSONB
from piccolo.columns.column_types import Timestamptz
from piccolo.columns.column_types import UUID
from piccolo.columns.column_types import Varchar
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.columns.defaults.uuid import UUID4
from piccolo.columns.indexes import IndexMethod
from piccolo.table import Table


class Run(Table, tablename="run", schema=None):
    id = UUID(
        default=UUID4(),
        null=False,
        primary_key=True,
        unique=False,
        index=False,
        index_method=IndexMethod.btree,
        choices=None,
        db_column_name=None,
        secret=False,
    )


ID = "2026-12-01T19:03:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "event buffer; indexes for event and subject lookups"


async def forwards():
    manager = MigrationManager(
        migration_id=ID, app_name="taskflow", description=DESCRIPTION
    )

    async def create_indexes() -> None:
        await Run.raw("CREATE INDEX run_subject ON run (subject)")
        await Run.raw(
            "CREATE INDEX run_correlation_key ON run (correlation_key) "
            "WHERE status = 'active' AND correlation_key IS NOT NULL"
        )
        await Run.raw("DROP INDEX IF EXISTS run_correlation")

    async def drop_indexes() -> None:
        await Run.raw(
            "CREATE INDEX IF NOT EXISTS run_correlation ON run (workflow, correlation_key) "
            "WHERE status = 'active' AND correlation_key IS NOT NULL"
        )
        await Run.raw("DROP INDEX IF EXISTS run_correlation_key")
        await Run.raw("DROP INDEX IF EXISTS run_subject")

    manager.add_raw(create_indexes)
    manager.add_raw_backwards(drop_indexes)

    manager.add_table(
        class_name="EventBuffer",
        tablename="event_buffer",
        schema=None,
        columns=None,
    )

    manager.add_column(
        table_class_name="EventBuffer",
        tablename="event_buffer",
        column_name="id",
        db_column_name="id",
        column_class_name="BigSerial",
        column_class=BigSerial,
        params={
            "null": False,
            "primary_key": True,
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
        table_class_name="EventBuffer",
        tablename="event_buffer",
        column_name="run",
        db_column_name="run",
        column_class_name="ForeignKey",
        column_class=ForeignKey,
        params={
            "references": Run,
            "on_delete": OnDelete.cascade,
            "on_update": OnUpdate.cascade,
            "target_column": None,
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": True,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="EventBuffer",
        tablename="event_buffer",
        column_name="event",
        db_column_name="event",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 200,
            "default": "",
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
        table_class_name="EventBuffer",
        tablename="event_buffer",
        column_name="payload",
        db_column_name="payload",
        column_class_name="JSONB",
        column_class=JSONB,
        params={
            "default": "{}",
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
        table_class_name="EventBuffer",
        tablename="event_buffer",
        column_name="slot_name",
        db_column_name="slot_name",
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

    manager.add_column(
        table_class_name="EventBuffer",
        tablename="event_buffer",
        column_name="item",
        db_column_name="item",
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
        table_class_name="EventBuffer",
        tablename="event_buffer",
        column_name="actor",
        db_column_name="actor",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 200,
            "default": "",
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
        table_class_name="EventBuffer",
        tablename="event_buffer",
        column_name="arrived_at",
        db_column_name="arrived_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": TimestamptzNow(),
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
        table_class_name="EventBuffer",
        tablename="event_buffer",
        column_name="expires_at",
        db_column_name="expires_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": TimestamptzNow(),
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": True,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    return manager
