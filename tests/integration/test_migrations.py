"""Migrating an empty database gives exactly the schema the table classes declare.

Partitions are left out: the timeline's months are made by the migration and the worker
at the time they run (``store/history/partitions.py``); their parent is compared.
"""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from taskflow.store.common import db, migrate, tables

pytestmark = pytest.mark.anyio

COLUMNS = """
    SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default,
           character_maximum_length
    FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name <> 'migration'
      AND table_name NOT IN (SELECT relname FROM pg_class WHERE relispartition)
    ORDER BY table_name, column_name
"""
INDEXES = """
    SELECT tablename, indexname, indexdef FROM pg_indexes
    WHERE schemaname = 'public' AND tablename <> 'migration'
      AND tablename NOT IN (SELECT relname FROM pg_class WHERE relispartition)
    ORDER BY tablename, indexname
"""
CONSTRAINTS = """
    SELECT conrelid::regclass::text AS table_name, conname, pg_get_constraintdef(oid) AS definition
    FROM pg_constraint
    WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> 'migration'
      AND conrelid NOT IN (SELECT oid FROM pg_class WHERE relispartition)
    ORDER BY 1, 2
"""
TRIGGERS = """
    SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal AND tgparentid = 0
    ORDER BY 1
"""
FUNCTIONS = """
    SELECT proname, pg_get_functiondef(oid) FROM pg_proc
    WHERE pronamespace = 'public'::regnamespace ORDER BY 1
"""


async def snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    conn = await asyncpg.connect(url)
    try:
        return {
            name: [tuple(row) for row in await conn.fetch(query)]
            for name, query in (
                ("columns", COLUMNS),
                ("indexes", INDEXES),
                ("constraints", CONSTRAINTS),
                ("functions", FUNCTIONS),
                ("triggers", TRIGGERS),
            )
        }
    finally:
        await conn.close()


async def test_migrations_build_the_declared_schema(pg_admin_url: str) -> None:
    admin = await asyncpg.connect(pg_admin_url)
    for name in ("schema_migrated", "schema_declared"):
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {name}")
    await admin.close()
    migrated_url = db.with_database(pg_admin_url, "schema_migrated")
    declared_url = db.with_database(pg_admin_url, "schema_declared")

    await migrate.migrate(migrated_url)
    await migrate.migrate(migrated_url)  # a second run changes nothing

    conn = await asyncpg.connect(declared_url)
    for table in tables.TABLES:
        for statement in table.create_table().ddl:
            await conn.execute(statement)
    for _, statement in tables.EXTRA_TABLES:
        await conn.execute(statement)
    for _, statement in tables.EXTRA_INDEXES:
        await conn.execute(statement)
    for _, statement in tables.EXTRA_FUNCTIONS:
        await conn.execute(statement)
    for _, statement in tables.EXTRA_TRIGGERS:
        await conn.execute(statement)
    await conn.close()

    migrated, declared = await snapshot(migrated_url), await snapshot(declared_url)
    assert migrated["columns"], "the migrations created no tables"
    assert migrated == declared
