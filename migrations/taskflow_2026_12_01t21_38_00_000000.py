"""Automatic steps: the step rows workers take, their attempts, steps.once results, and the
results of automatic states kept on the run (``run.step_results``)."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T21:38:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "automatic steps"

# Braces are doubled: raw() formats its text.
_CREATE = (
    "ALTER TABLE run ADD COLUMN step_results JSONB NOT NULL DEFAULT '{{}}'",
    'CREATE TABLE "step" ("id" BIGSERIAL PRIMARY KEY NOT NULL, '
    "\"key\" VARCHAR(300) UNIQUE NOT NULL DEFAULT '', "
    '"run" UUID NOT NULL REFERENCES "run" ("id") ON DELETE CASCADE ON UPDATE CASCADE '
    "DEFAULT null, "
    '"visit" INTEGER NOT NULL DEFAULT 0, '
    "\"state\" VARCHAR(100) NOT NULL DEFAULT '', "
    "\"kind\" VARCHAR(20) NOT NULL DEFAULT '', "
    "\"action\" VARCHAR(300) NOT NULL DEFAULT '', "
    "\"status\" VARCHAR(20) NOT NULL DEFAULT 'due', "
    '"attempts" INTEGER NOT NULL DEFAULT 0, '
    '"counted_from" INTEGER NOT NULL DEFAULT 0, '
    '"due_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
    '"result" JSONB DEFAULT null, '
    '"last_error" TEXT DEFAULT null, '
    '"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
    '"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
    '"ended_at" TIMESTAMPTZ DEFAULT null)',
    'CREATE INDEX step_run ON "step" USING btree ("run")',
    'CREATE TABLE "step_attempt" ("id" BIGSERIAL PRIMARY KEY NOT NULL, '
    '"step" BIGINT NOT NULL REFERENCES "step" ("id") ON DELETE CASCADE ON UPDATE CASCADE '
    "DEFAULT null, "
    '"attempt" INTEGER NOT NULL DEFAULT 0, '
    '"worker" VARCHAR(200) DEFAULT null, '
    '"started_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
    '"finished_at" TIMESTAMPTZ DEFAULT null, '
    "\"outcome\" VARCHAR(20) NOT NULL DEFAULT 'running', "
    '"duration_ms" INTEGER DEFAULT null, '
    '"error_class" TEXT DEFAULT null, '
    '"error_message" TEXT DEFAULT null, '
    '"traceback" TEXT DEFAULT null)',
    'CREATE TABLE "step_once" ("id" BIGSERIAL PRIMARY KEY NOT NULL, '
    '"run" UUID NOT NULL REFERENCES "run" ("id") ON DELETE CASCADE ON UPDATE CASCADE '
    "DEFAULT null, "
    "\"name\" VARCHAR(200) NOT NULL DEFAULT '', "
    '"result" JSONB DEFAULT null, '
    '"recorded_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)',
    "CREATE INDEX step_due ON step (due_at, id) WHERE status IN ('due', 'running')",
    "CREATE INDEX step_parked ON step (updated_at) WHERE status = 'parked'",
    "CREATE UNIQUE INDEX step_attempt_step ON step_attempt (step, attempt)",
    "CREATE UNIQUE INDEX step_once_run_name ON step_once (run, name)",
)
_DROP = (
    'DROP TABLE IF EXISTS "step_once"',
    'DROP TABLE IF EXISTS "step_attempt"',
    'DROP TABLE IF EXISTS "step"',
    "ALTER TABLE run DROP COLUMN IF EXISTS step_results",
)


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        for statement in _CREATE:
            await _Raw.raw(statement)

    async def drop() -> None:
        for statement in _DROP:
            await _Raw.raw(statement)

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
