"""Notification delivery: a state per notification, a lease for senders, attempts and errors.

``delivery_state`` is pending, sending (leased until ``lease_until`` by the
sender holding ``lease``), sent, failed (a temporary failure: tried again from
``retry_at``) or dead (a permanent failure, or too many attempts). ``attempts``
counts takes, ``last_error`` keeps the last failure. The deliverable rows are
read from one small partial index.

Notifications written before this migration are marked dead ("written before
taskflow tracked delivery"): an outside mailer may already have sent them, and a
newly configured e-mail sender must not send the whole history again.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T21:37:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "notification delivery state, lease, attempts and last error"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw(
            "ALTER TABLE notification "
            "ADD COLUMN delivery_state VARCHAR(10) NOT NULL DEFAULT 'pending', "
            "ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0, "
            "ADD COLUMN last_error TEXT NULL DEFAULT null, "
            "ADD COLUMN lease UUID NULL DEFAULT null, "
            "ADD COLUMN lease_until TIMESTAMPTZ NULL DEFAULT null, "
            "ADD COLUMN retry_at TIMESTAMPTZ NULL DEFAULT null, "
            "ADD COLUMN sent_at TIMESTAMPTZ NULL DEFAULT null"
        )
        await _Raw.raw(
            "UPDATE notification SET delivery_state = 'dead', "
            "last_error = 'written before taskflow tracked delivery: not sent by taskflow'"
        )
        await _Raw.raw(
            "CREATE INDEX notification_deliverable ON notification (deliver_at, id) "
            "WHERE delivery_state IN ('pending', 'sending', 'failed')"
        )

    async def drop() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS notification_deliverable")
        await _Raw.raw(
            "ALTER TABLE notification DROP COLUMN IF EXISTS delivery_state, "
            "DROP COLUMN IF EXISTS attempts, DROP COLUMN IF EXISTS last_error, "
            "DROP COLUMN IF EXISTS lease, DROP COLUMN IF EXISTS lease_until, "
            "DROP COLUMN IF EXISTS retry_at, DROP COLUMN IF EXISTS sent_at"
        )

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
