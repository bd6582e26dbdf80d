"""Automations (docs/automations.md): the rules leads write (``automation``) and the
once-per-event row of each decision (``automation_act``, unique per automation and event)."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T17:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "automations"

CREATE = (
    'CREATE TABLE "automation" ("id" UUID PRIMARY KEY NOT NULL DEFAULT gen_random_uuid(), "workflow" VARCHAR(100) NOT NULL DEFAULT \'\', "name" VARCHAR(200) NOT NULL DEFAULT \'\', "status" VARCHAR(20) NOT NULL DEFAULT \'draft\', "version" INTEGER NOT NULL DEFAULT 0, "document" JSONB NOT NULL DEFAULT \'{}\', "author" VARCHAR(100) NOT NULL DEFAULT \'\', "created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, "updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)',
    'CREATE TABLE "automation_act" ("id" BIGSERIAL PRIMARY KEY NOT NULL, "automation" UUID NOT NULL REFERENCES "automation" ("id") ON DELETE CASCADE ON UPDATE CASCADE DEFAULT null, "version" INTEGER NOT NULL DEFAULT 0, "event_key" VARCHAR(200) NOT NULL DEFAULT \'\', "outcome" VARCHAR(20) NOT NULL DEFAULT \'\', "subject" VARCHAR(100) NOT NULL DEFAULT \'\', "event_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, "at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)',
    "ALTER TABLE automation ADD COLUMN published_at TIMESTAMPTZ",
    "ALTER TABLE automation ADD COLUMN attention VARCHAR(500) NOT NULL DEFAULT ''",
    "ALTER TABLE automation ADD COLUMN attention_run UUID",
    "CREATE INDEX automation_act_enrolled ON automation_act (automation, subject, event_at) "
    "WHERE outcome = 'act'",
    "CREATE INDEX automation_workflow ON automation (workflow, status)",
    "CREATE UNIQUE INDEX automation_act_once ON automation_act (automation, event_key)",
)
DROP = ('DROP TABLE IF EXISTS "automation_act"', 'DROP TABLE IF EXISTS "automation"')


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(ID, DESCRIPTION, CREATE, DROP)
