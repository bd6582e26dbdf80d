"""Principal lifecycle and idempotency keys.

``principal.tokens_valid_after``: staff tokens issued before it are refused
(deactivation and "sign out everywhere" move it). ``idempotency_key``: the
first answer of a mutation sent with an ``idempotencyKey``, unique per actor,
operation and key.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T19:04:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "principal tokens_valid_after and the idempotency_key table"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw(
            'ALTER TABLE "principal" ADD COLUMN "tokens_valid_after" TIMESTAMPTZ DEFAULT null'
        )
        await _Raw.raw(
            'CREATE TABLE "idempotency_key" ("id" BIGSERIAL PRIMARY KEY NOT NULL, '
            "\"actor\" VARCHAR(300) NOT NULL DEFAULT '', "
            "\"operation\" VARCHAR(100) NOT NULL DEFAULT '', "
            "\"key\" VARCHAR(200) NOT NULL DEFAULT '', "
            "\"fingerprint\" VARCHAR(64) NOT NULL DEFAULT '', "
            '"answer" JSONB DEFAULT null, '
            '"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)'
        )
        await _Raw.raw(
            "CREATE UNIQUE INDEX idempotency_key_scope ON idempotency_key (actor, operation, key)"
        )
        await _Raw.raw("CREATE INDEX idempotency_key_created ON idempotency_key (created_at)")

    async def drop() -> None:
        await _Raw.raw("DROP TABLE IF EXISTS idempotency_key")
        await _Raw.raw('ALTER TABLE "principal" DROP COLUMN IF EXISTS "tokens_valid_after"')

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
