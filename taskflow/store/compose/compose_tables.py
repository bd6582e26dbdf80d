"""The table of child runs (docs/composition.md); importable from ``tables.py``."""

from __future__ import annotations

from piccolo.columns import JSONB, BigSerial, Boolean, ForeignKey, Integer, Timestamptz, Varchar
from piccolo.columns.base import OnDelete
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from taskflow.store.runs.run_tables import Run


class RunChild(Table, tablename="run_child"):
    """A child run a parent started under a label: the await is this row, never a task.

    Written ``starting`` by the unit of work that enters the parent's state; the worker
    starts the child (``live``); the trigger ``run_child_on_end`` marks it ``ended`` in the
    child's own ending statement (or ``cancelling`` when the parent is cancelled); the
    worker then resumes (or cancels) and marks it ``settled``, once, under the parent's
    lock. ``detached``: an operator cut it loose.
    """

    id = BigSerial(primary_key=True)
    #: ``<parent>:<visit>:<label>``: planning the entry again adds nothing.
    key = Varchar(length=300, unique=True)
    parent = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade, index=True)
    child = ForeignKey(references=Run, null=True, on_delete=OnDelete.set_null, index=True)
    visit = Integer()
    state = Varchar(length=100)
    label = Varchar(length=100)
    workflow = Varchar(length=100)
    awaited = Boolean(default=True)
    #: starting | live | cancelling | ended | settled | detached
    status = Varchar(length=20, default="starting")
    #: The child's subject as the parent named it: external id and attributes (or nulls).
    subject = JSONB(default="{}")
    #: How the child ended, as the parent reads it (``child("<label>")``).
    outcome = JSONB(null=True, default=None)
    created_at = Timestamptz(default=TimestamptzNow())
    updated_at = Timestamptz(default=TimestamptzNow())


TABLES = (RunChild,)
