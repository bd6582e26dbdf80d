"""The timeline (``audit_event``) partitioned by month (docs/scaling.md, "Partitioned history").

Today's table becomes the first partition (``audit_event_before``: every line up to the
month after the migration) without rewriting it, and without a long lock:

1. a CHECK on ``at`` below that bound, added ``NOT VALID`` (an instant's lock), then
   validated while writes go on (``SHARE UPDATE EXCLUSIVE``);
2. the unique index ``(id, at)`` the new primary key needs, built ``CONCURRENTLY``;
3. one short transaction (``ACCESS EXCLUSIVE`` on the timeline, no scan, no copy): the table
   is renamed, the partitioned parent made from it (``LIKE``: every column, whatever other
   migrations added), its foreign keys, indexes, triggers, row-level security and policies
   copied from it, the old table attached (the validated CHECK spares the scan) and a
   DEFAULT partition added for lines beyond the months made so far.

Month partitions (``audit_event_pYYYY_MM``) are made ahead by the worker
(``timeline_partitions()``, ``store/history/partitions.py``); retention drops whole ones.
Not wrapped in one transaction (``CONCURRENTLY``); each step is idempotent, so a migration
that stopped half-way runs again to the end.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps
from taskflow.store.history import partitions

ID = "2026-12-04T19:00:00:000000"
VERSION = "1.39.0"
DESCRIPTION = "timeline partitioned by month"

FORWARDS = (
    *((partitions.NOT_YET_PARTITIONED, step) for step in partitions.MIGRATION_STEPS),
    ("SELECT to_regproc('timeline_partitions') IS NULL", partitions.FUNCTION[1]),
)
BACKWARDS = (f"DROP FUNCTION IF EXISTS {partitions.FUNCTION[0]}(timestamptz, integer)",)


async def forwards() -> MigrationManager:
    return migration_steps.run_steps(ID, DESCRIPTION, FORWARDS, BACKWARDS, in_transaction=False)
