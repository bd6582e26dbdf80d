"""The tables retention writes (``store/operate/retention.py``; docs/operations.md, "Retention").

``pruned_slot`` keeps, for each slot of a pruned run, exactly what the SLA report reads
of an ended, measured slot (the columns of the ``slot_ended_report`` index), under the
same names, so the report reads it as one more branch of its UNION ALL. ``prune`` is the
record of each pruned batch: when, which workflow, and how many rows of each kind went.
"""

from __future__ import annotations

from piccolo.columns import (
    UUID,
    Array,
    BigSerial,
    Integer,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from taskflow.store.runs.run_tables import Measures


class PrunedSlot(Table, Measures, tablename="pruned_slot"):
    """An ended slot of a pruned run, as the SLA report reads it (no subject data, no
    payload, no timeline)."""

    id = UUID(primary_key=True)
    run = UUID()
    workflow = Varchar(length=100)
    version = Integer(default=1)
    state = Varchar(length=100)
    name = Varchar(length=100)
    #: satisfied | cancelled
    status = Varchar(length=20)
    audience = Array(base_column=Text())
    holder = Varchar(length=200, null=True, default=None)
    satisfied_by = Varchar(length=200, null=True, default=None)
    priority = Integer(default=3)
    opened_at = Timestamptz(null=True, default=None, index=True)
    satisfied_at = Timestamptz(null=True, default=None)
    cancelled_at = Timestamptz(null=True, default=None)
    pruned_at = Timestamptz(default=TimestamptzNow())


class Prune(Table, tablename="prune"):
    """One pruned batch of ended runs of one workflow: the count on the record."""

    id = BigSerial(primary_key=True)
    pruned_at = Timestamptz(default=TimestamptzNow())
    workflow = Varchar(length=100)
    #: The age the runs were past (days), and the oldest and newest end among them.
    retention_days = Integer()
    oldest_ended_at = Timestamptz(null=True, default=None)
    newest_ended_at = Timestamptz(null=True, default=None)
    runs = Integer(default=0)
    slots = Integer(default=0)
    timeline = Integer(default=0)
    notifications = Integer(default=0)
    links = Integer(default=0)
    timers = Integer(default=0)
    subjects = Integer(default=0)


TABLES: tuple[type[Table], ...] = (PrunedSlot, Prune)
