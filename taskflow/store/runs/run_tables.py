"""Piccolo table classes of runs: principals, subjects, runs, slots, their timeline, SLA
clocks and timers (the rest of the declared schema, and ``TABLES``, are in ``tables.py``)."""

from __future__ import annotations

from piccolo.columns import (
    JSONB,
    UUID,
    Array,
    BigInt,
    BigSerial,
    Boolean,
    DoublePrecision,
    ForeignKey,
    Integer,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.columns.base import OnDelete
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from taskflow.core.clocks.timer_states import TimerStatus
from taskflow.core.runs.statuses import RunStatus


class Measures:
    """A slot's report measures, stored once it has ended (``store/reports/slot_measures.py``): the
    columns ``slot`` and ``pruned_slot`` share (a mixin: Piccolo copies its columns)."""

    #: The milestone of the clock they were taken on ('' when none; null: not measured).
    measured_clock = Varchar(length=20, null=True, default=None)
    #: Opening to first pickup, and to completion, in business and real time, minus pauses (µs).
    pickup_biz_us = BigInt(null=True, default=None)
    pickup_real_us = BigInt(null=True, default=None)
    done_biz_us = BigInt(null=True, default=None)
    done_real_us = BigInt(null=True, default=None)
    #: Held (claimed or assigned) and not paused, in µs.
    worked_us = BigInt(null=True, default=None)
    #: The measured clock was met; it counts as breached from ``breach_from`` (null: never).
    clock_met = Boolean(null=True, default=None)
    breach_from = Timestamptz(null=True, default=None)


class Principal(Table, tablename="principal"):
    """A person (or system account) known to taskflow."""

    id = Varchar(length=200, primary_key=True)
    display_name = Varchar(length=200)
    email = Varchar(length=320, null=True, default=None)
    roles = Array(base_column=Varchar(length=100))
    groups = Array(base_column=Varchar(length=100))
    attributes = JSONB(default="{}")
    time_zone = Varchar(length=64, default="UTC")
    calendar = Varchar(length=100, null=True, default=None)
    active = Boolean(default=True)
    #: Scoped powers: a JSON list of grants (``core.principals.Grant``).
    powers = JSONB(default="[]")
    created_at = Timestamptz(default=TimestamptzNow())
    updated_at = Timestamptz(default=TimestamptzNow())
    #: Staff tokens issued before this instant are refused (deactivation, sign out everywhere).
    tokens_valid_after = Timestamptz(null=True, default=None)
    #: Weekly windows or a calendar name (``core.access.working_hours``); null: not set.
    working_hours = JSONB(null=True, default=None)
    #: Absences: a JSON list of ``{"from", "to", "note"}``.
    leave_spans = JSONB(default="[]")


class Subject(Table, tablename="subject"):
    """A tracked entity as the application sends it (an expense, a ticket...)."""

    id = UUID(primary_key=True)
    type = Varchar(length=100)
    external_id = Varchar(length=200)
    attributes = JSONB(default="{}")
    #: Bumped on every update; runs re-check rules and budgets then.
    version = Integer(default=1)
    created_at = Timestamptz(default=TimestamptzNow())
    updated_at = Timestamptz(default=TimestamptzNow())
    #: When it was deleted (``deleteSubject``): its runs ended, and it takes no new run.
    gone_at = Timestamptz(null=True, default=None)


class Run(Table, tablename="run"):
    """One run of one workflow definition version for one subject."""

    id = UUID(primary_key=True)
    workflow = Varchar(length=100)
    definition_version = Integer()
    definition_digest = Varchar(length=100)
    subject = ForeignKey(references=Subject, null=False, on_delete=OnDelete.restrict)
    state = Varchar(length=100)
    #: active | completed | cancelled
    status = Varchar(length=20, default=RunStatus.ACTIVE.value)
    #: How many states the run has entered: slots belong to one visit.
    visit = Integer(default=1)
    correlation_key = Varchar(length=200, null=True, default=None)
    idempotency_key = Varchar(length=200, null=True, default=None)
    started_by = Varchar(length=200, null=True, default=None)
    started_at = Timestamptz(default=TimestamptzNow())
    state_entered_at = Timestamptz(default=TimestamptzNow())
    updated_at = Timestamptz(default=TimestamptzNow())
    ended_at = Timestamptz(null=True, default=None)
    version = Integer(default=1)
    #: When the current state's completion rule held but no route matched (needs attention);
    #: null once the run enters another state.
    unmatched_at = Timestamptz(null=True, default=None)
    #: What automatic steps returned, by state name (``result.<state>`` in conditions).
    step_results = JSONB(default="{}")


class Slot(Table, Measures, tablename="slot"):
    """A human task: a wait for one event in one visit of a state."""

    id = UUID(primary_key=True)
    run = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade)
    visit = Integer()
    state = Varchar(length=100)
    name = Varchar(length=100)
    #: The event it waits for.
    waits_for = Varchar(length=100)
    #: Position in a foreach expansion (null for a plain slot) and the element itself.
    item_index = Integer(null=True, default=None)
    item = JSONB(null=True, default=None)
    label = Text(default="")
    #: pending | open | claimed | satisfied | cancelled
    status = Varchar(length=20)
    holder = Varchar(length=200, null=True, default=None)
    #: Audience keys: a principal carrying any of them is a candidate (see core audience).
    audience = Array(base_column=Text())
    #: Keys that exclude a principal outright (residual "not <key>" rules, checked in SQL).
    deny = Array(base_column=Text())
    #: Residual rules SQL cannot express, checked on the few rows that survive.
    residual = JSONB(default="[]")
    delegates = Array(base_column=Text())
    delegates_deny = Array(base_column=Text())
    delegates_residual = JSONB(default="[]")
    #: 1 is the most urgent.
    priority = Integer(default=3)
    #: The nearest SLA due instant (inbox order); null when no milestone runs.
    due_at = Timestamptz(null=True, default=None)
    payload = JSONB(null=True, default=None)
    #: Denormalised from the run so the inbox and work queries need no join to filter.
    workflow = Varchar(length=100)
    version = Integer(default=1)
    created_at = Timestamptz(default=TimestamptzNow())
    opened_at = Timestamptz(null=True, default=None)
    claimed_at = Timestamptz(null=True, default=None)
    satisfied_at = Timestamptz(null=True, default=None)
    satisfied_by = Varchar(length=200, null=True, default=None)
    cancelled_at = Timestamptz(null=True, default=None)
    updated_at = Timestamptz(default=TimestamptzNow())
    #: What the timeline says of who held the slot (``core/slots/holding.py``), kept by every
    #: move: the first claim or assignment, held µs already closed, the open hold's start.
    picked_at = Timestamptz(null=True, default=None)
    held_us = BigInt(default=0)
    held_since = Timestamptz(null=True, default=None)
    #: The clock a live slot's pickup_biz_us / pickup_real_us were taken on at its pickup
    #: ('' for none; null: not taken): final from then, so the report reads them.
    pickup_clock = Varchar(length=20, null=True, default=None)
    #: The report's clock of a live slot (finished, else assigned; see
    #: ``store/clocks/deadlines.py``), copied from its ``sla_clock`` row whenever that is written:
    #: the report reads a live slot from here instead of probing ``sla_clock`` per slot. Null
    #: milestone: no clock.
    sla_milestone = Varchar(length=20, null=True, default=None)
    sla_calendar = Varchar(length=100, null=True, default=None)
    sla_budget_us = BigInt(null=True, default=None)
    sla_working_days = DoublePrecision(null=True, default=None)
    sla_pauses = JSONB(null=True, default=None)
    sla_met_at = Timestamptz(null=True, default=None)
    sla_due_at = Timestamptz(null=True, default=None)
    sla_breached_at = Timestamptz(null=True, default=None)


class AuditEvent(Table, tablename="audit_event"):
    """One line of a run's timeline: who did what, when, why."""

    id = BigSerial(primary_key=True)
    run = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade)
    slot = UUID(null=True, default=None)
    kind = Varchar(length=60)
    actor = Varchar(length=200, null=True, default=None)
    reason = Text(null=True, default=None)
    details = JSONB(default="{}")
    at = Timestamptz(default=TimestamptzNow())


class SlaClock(Table, tablename="sla_clock"):
    """A slot's milestone clock as a ledger: budget, start, pauses, met (see core.clocks).

    ``due_at`` and ``breached_at`` are derived copies kept for reports and the
    breach timer; the ledger columns are the truth.
    """

    id = UUID(primary_key=True)
    slot = ForeignKey(references=Slot, null=False, on_delete=OnDelete.cascade)
    run = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade)
    #: assigned | finished
    milestone = Varchar(length=20)
    #: business | real
    budget_kind = Varchar(length=20)
    #: The budget's fixed part in microseconds, plus working days (see core budgets).
    budget_us = BigInt()
    working_days = DoublePrecision(default=0.0)
    #: Null for real time.
    calendar = Varchar(length=100, null=True, default=None)
    started_at = Timestamptz()
    #: [[start, end|null], ...] ISO instants.
    pauses = JSONB(default="[]")
    met_at = Timestamptz(null=True, default=None)
    due_at = Timestamptz(null=True, default=None)
    breached_at = Timestamptz(null=True, default=None)
    updated_at = Timestamptz(default=TimestamptzNow())
    #: Budget changes mid-run: [[at, policy, kind, budget_us, working_days, calendar], ...].
    recomputes = JSONB(default="[]")


class Timer(Table, tablename="timer"):
    """A durable deadline: one row per reminder, breach or state timeout, re-armed in place."""

    id = BigSerial(primary_key=True)
    #: Stable name of the deadline (``<slot>:reminder:0``, ``<run>:<visit>:timeout:0``).
    key = Varchar(length=300, unique=True)
    run = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade)
    slot = UUID(null=True, default=None)
    #: breach | reminder | timeout
    kind = Varchar(length=20)
    #: The milestone (breach), reminder index or timeout index it belongs to.
    part = Varchar(length=100)
    due_at = Timestamptz()
    #: armed | fired | cancelled | dead | discarded (``core.timer_states.TimerStatus``)
    status = Varchar(length=20, default=TimerStatus.ARMED.value)
    #: How many times it has fired (a repeating reminder fires many times).
    fired = Integer(default=0)
    fired_at = Timestamptz(null=True, default=None)
    updated_at = Timestamptz(default=TimestamptzNow())
    #: Failed firings since it last fired or was armed; ``max_attempts`` of them: dead.
    attempts = Integer(default=0)
    #: The last failure, ``Class: message`` (short), and when it happened.
    last_error = Text(null=True, default=None)
    failed_at = Timestamptz(null=True, default=None)
    #: The due instant the definition planned, while a failure pushed ``due_at`` back.
    planned_at = Timestamptz(null=True, default=None)
