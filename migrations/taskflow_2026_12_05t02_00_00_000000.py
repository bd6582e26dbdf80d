"""State spans partitioned by month of ``left_at`` (docs/scaling.md, "Partitioned history"):
a closed span lies in the month its run left the state, so an ended run's spans sit in the
months it moved through, and retention drops whole months of them as it does the timeline's.

The standing spans (``left_at`` 'infinity': one per live run, and the undone ones that stood)
get a partition of their own (``state_span_standing``), and the one-standing-span rule
becomes the unique index ``state_span_open (run, left_at)`` over them: a partitioned table's
unique index must hold the partition key, and the predicate pins it.

Today's table becomes the first partition (``state_span_before``) without rewriting it:

1. a CHECK that closed spans ended before that partition's bound, ``NOT VALID`` (an
   instant's lock), validated while writes go on;
2. the unique index ``(id, left_at)`` for the new primary key and an index of the standing
   spans, built ``CONCURRENTLY``;
3. one transaction under ``ACCESS EXCLUSIVE`` on ``state_span``: the parent made ``LIKE`` the
   table with its foreign keys, indexes, triggers, row-level security and policies; the
   standing spans moved to their partition (the only rows copied: one per live run); the old
   table attached (PostgreSQL reads it once to check the bound: the CHECK cannot prove it,
   it let standing spans in) and a DEFAULT partition.

Month partitions (``state_span_pYYYY_MM``) are made ahead by the same function as the
timeline's, now one for both (``month_partitions``; ``timeline_partitions`` and
``timeline_partition_walls`` call the general ones). Not one transaction
(``CONCURRENTLY``); each step is idempotent, so a migration stopped half-way runs again.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps
from taskflow.store.history import partitions

ID = "2026-12-05T02:00:00:000000"
VERSION = "1.39.0"
DESCRIPTION = "state spans partitioned by month"


def _replacing(statement: str) -> str:
    return statement.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


FORWARDS = (
    (None, _replacing(partitions.PARTITION_WALLS[1])),
    (None, _replacing(partitions.MONTHS_FUNCTION[1])),
    (None, _replacing(partitions.FUNCTION[1])),
    (None, _replacing(partitions.WALLS[1])),
    *((partitions.SPANS_NOT_YET_PARTITIONED, step) for step in partitions.SPAN_MIGRATION_STEPS),
    (None, "SELECT month_partitions('state_span', 'left_at', now(), 2)"),
)
BACKWARDS = ()


async def forwards() -> MigrationManager:
    return migration_steps.run_steps(ID, DESCRIPTION, FORWARDS, BACKWARDS, in_transaction=False)
