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

#: The partition maker as this migration made it (a frozen copy; migration 2026-12-05T02:00
#: made it a wrapper of ``month_partitions``).
FUNCTION = "-- timeline_partitions(at, ahead): the month partitions of at's month and the `ahead`\n-- after it, made where missing (the worker calls it); lines the DEFAULT partition took\n-- for such a month move into it. A month the first partition covers is skipped (the\n-- overlap is refused), as is one another worker made at the same moment. SELECT * moves whole rows: the columns are the parent's, whatever\n-- migrations added. Returns how many partitions it made.\nCREATE FUNCTION timeline_partitions(at timestamptz, ahead integer) RETURNS integer\nLANGUAGE plpgsql AS $$\nDECLARE\n  made integer := 0;\n  lo timestamptz;\n  hi timestamptz;\n  part text;\nBEGIN\n  FOR i IN 0..ahead LOOP\n    lo := date_trunc('month', at, 'UTC') + make_interval(months => i);\n    hi := lo + interval '1 month';\n    part := 'audit_event_p' || to_char(lo AT TIME ZONE 'UTC', 'YYYY_MM');\n    CONTINUE WHEN to_regclass(part) IS NOT NULL;\n    BEGIN\n      EXECUTE format('CREATE TABLE %I (LIKE audit_event INCLUDING DEFAULTS INCLUDING IDENTITY '\n                     'INCLUDING GENERATED INCLUDING STORAGE)', part);\n      EXECUTE format('WITH m AS (DELETE FROM audit_event_default WHERE at >= %L AND at < %L '\n                     'RETURNING *) INSERT INTO %I SELECT * FROM m', lo, hi, part);\n      EXECUTE format('ALTER TABLE audit_event ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',\n                     part, lo, hi);\n      PERFORM timeline_partition_walls(part::regclass);\n      made := made + 1;\n    EXCEPTION WHEN invalid_object_definition OR duplicate_table THEN\n      NULL;  -- the first partition's months, or another worker made it just now\n    END;\n  END LOOP;\n  RETURN made;\nEND $$"

FORWARDS = (
    *((partitions.NOT_YET_PARTITIONED, step) for step in partitions.MIGRATION_STEPS),
    ("SELECT to_regproc('timeline_partitions') IS NULL", FUNCTION),
)
BACKWARDS = ("DROP FUNCTION IF EXISTS timeline_partitions(timestamptz, integer)",)


async def forwards() -> MigrationManager:
    return migration_steps.run_steps(ID, DESCRIPTION, FORWARDS, BACKWARDS, in_transaction=False)
