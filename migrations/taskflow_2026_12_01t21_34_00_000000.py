"""Retention: ``pruned_slot`` (what the SLA report reads of each slot of a pruned run) and
``prune`` (one row per pruned batch: the count on the record), and the index
``run_workflow_ended`` retention finds a workflow's oldest ended runs by. docs/operations.md,
"Retention"; ``store/operate/retention_tables.py``.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T21:34:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "retention: pruned slots' report measures, and the prune record"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw(
            'CREATE TABLE "pruned_slot" ('
            '"id" UUID PRIMARY KEY NOT NULL DEFAULT gen_random_uuid(), '
            '"run" UUID NOT NULL DEFAULT gen_random_uuid(), '
            "\"workflow\" VARCHAR(100) NOT NULL DEFAULT '', "
            '"version" INTEGER NOT NULL DEFAULT 1, '
            "\"state\" VARCHAR(100) NOT NULL DEFAULT '', "
            "\"name\" VARCHAR(100) NOT NULL DEFAULT '', "
            "\"status\" VARCHAR(20) NOT NULL DEFAULT '', "
            "\"audience\" TEXT[] NOT NULL DEFAULT '{{}}', "  # braces doubled: raw() formats
            '"holder" VARCHAR(200) DEFAULT null, '
            '"satisfied_by" VARCHAR(200) DEFAULT null, '
            '"priority" INTEGER NOT NULL DEFAULT 3, '
            '"opened_at" TIMESTAMPTZ DEFAULT null, '
            '"satisfied_at" TIMESTAMPTZ DEFAULT null, '
            '"cancelled_at" TIMESTAMPTZ DEFAULT null, '
            '"measured_clock" VARCHAR(20) DEFAULT null, '
            '"pickup_biz_us" BIGINT DEFAULT null, '
            '"pickup_real_us" BIGINT DEFAULT null, '
            '"done_biz_us" BIGINT DEFAULT null, '
            '"done_real_us" BIGINT DEFAULT null, '
            '"worked_us" BIGINT DEFAULT null, '
            '"clock_met" BOOLEAN DEFAULT null, '
            '"breach_from" TIMESTAMPTZ DEFAULT null, '
            '"pruned_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)'
        )
        await _Raw.raw(
            'CREATE INDEX pruned_slot_opened_at ON "pruned_slot" USING btree ("opened_at")'
        )
        await _Raw.raw(
            "CREATE INDEX run_workflow_ended ON run (workflow, ended_at) "
            "WHERE ended_at IS NOT NULL"
        )
        await _Raw.raw(
            'CREATE TABLE "prune" ('
            '"id" BIGSERIAL PRIMARY KEY NOT NULL, '
            '"pruned_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
            "\"workflow\" VARCHAR(100) NOT NULL DEFAULT '', "
            '"retention_days" INTEGER NOT NULL DEFAULT 0, '
            '"oldest_ended_at" TIMESTAMPTZ DEFAULT null, '
            '"newest_ended_at" TIMESTAMPTZ DEFAULT null, '
            '"runs" INTEGER NOT NULL DEFAULT 0, '
            '"slots" INTEGER NOT NULL DEFAULT 0, '
            '"timeline" INTEGER NOT NULL DEFAULT 0, '
            '"notifications" INTEGER NOT NULL DEFAULT 0, '
            '"links" INTEGER NOT NULL DEFAULT 0, '
            '"timers" INTEGER NOT NULL DEFAULT 0, '
            '"subjects" INTEGER NOT NULL DEFAULT 0)'
        )

    async def drop() -> None:
        await _Raw.raw('DROP TABLE IF EXISTS "prune"')
        await _Raw.raw("DROP INDEX IF EXISTS run_workflow_ended")
        await _Raw.raw('DROP TABLE IF EXISTS "pruned_slot"')

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
