"""The tables of automatic steps: the steps workers take, their attempts, ``steps.once``.

Declared here and importable from ``tables.py`` (docs/automatic-steps.md).
"""

from __future__ import annotations

from piccolo.columns import JSONB, BigSerial, ForeignKey, Integer, Text, Timestamptz, Varchar
from piccolo.columns.base import OnDelete
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from taskflow.store.runs.run_tables import Run


class Step(Table, tablename="step"):
    """An automatic step to run: a state's action, a recurring or a timeout's action.

    Taken by workers with SKIP LOCKED; while ``running``, ``due_at`` is the end of the
    taker's lease: a worker that dies leaves it to be taken again then (at-least-once).
    """

    id = BigSerial(primary_key=True)
    #: ``<run>:<visit>:step``, ``<run>:<visit>:every:<i>:<n>``, ``<run>:<visit>:timeout:<i>``.
    key = Varchar(length=300, unique=True)
    run = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade, index=True)
    visit = Integer()
    state = Varchar(length=100)
    #: action | every | timeout
    kind = Varchar(length=20)
    #: The action's import path.
    action = Varchar(length=300)
    #: due | running | succeeded | failed | parked | cancelled
    status = Varchar(length=20, default="due")
    attempts = Integer(default=0)
    #: ``attempts`` when an operator last retried it: the policy counts attempts after it.
    counted_from = Integer(default=0)
    due_at = Timestamptz()
    result = JSONB(null=True, default=None)
    last_error = Text(null=True, default=None)
    created_at = Timestamptz(default=TimestamptzNow())
    updated_at = Timestamptz(default=TimestamptzNow())
    ended_at = Timestamptz(null=True, default=None)


class StepAttempt(Table, tablename="step_attempt"):
    """One attempt of a step: when, by whom, how it ended, how long it took, its error."""

    id = BigSerial(primary_key=True)
    step = ForeignKey(references=Step, null=False, on_delete=OnDelete.cascade)
    attempt = Integer()
    worker = Varchar(length=200, null=True, default=None)
    started_at = Timestamptz()
    finished_at = Timestamptz(null=True, default=None)
    #: running | succeeded | failed | lost (its lease ran out) | discarded
    outcome = Varchar(length=20, default="running")
    duration_ms = Integer(null=True, default=None)
    error_class = Text(null=True, default=None)
    error_message = Text(null=True, default=None)
    traceback = Text(null=True, default=None)


class StepOnce(Table, tablename="step_once"):
    """What ``steps.once(name, fn)`` recorded for a run: returned again on every replay."""

    id = BigSerial(primary_key=True)
    run = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade)
    name = Varchar(length=200)
    result = JSONB(null=True, default=None)
    recorded_at = Timestamptz(default=TimestamptzNow())
