"""Piccolo table classes: the declared schema, from which migrations are made.

Runtime queries go through asyncpg on explicit connections (see ``db.py``):
each use case owns one transaction on one connection, which keeps Piccolo's
context-variable transactions (a trap with concurrent tasks, STACK-NOTES.md)
out of the hot path. Piccolo declares the schema and runs the migrations.

Indexes Piccolo cannot declare (partial, covering, GIN) and the SQL functions
are listed in ``schema_extras.py`` (``EXTRA_INDEXES``, ``EXTRA_FUNCTIONS``,
also importable from here) and created by raw steps in the migrations; the
schema test treats them as part of the declaration.
"""

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

from taskflow.store.schema_extras import EXTRA_FUNCTIONS as EXTRA_FUNCTIONS
from taskflow.store.schema_extras import EXTRA_INDEXES as EXTRA_INDEXES


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


class Run(Table, tablename="run"):
    """One run of one workflow definition version for one subject."""

    id = UUID(primary_key=True)
    workflow = Varchar(length=100)
    definition_version = Integer()
    definition_digest = Varchar(length=100)
    subject = ForeignKey(references=Subject, null=False, on_delete=OnDelete.restrict)
    state = Varchar(length=100)
    #: active | completed | cancelled
    status = Varchar(length=20, default="active")
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


class Slot(Table, tablename="slot"):
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
    #: What the timeline says of who held the slot (``core/runs/holding.py``), kept by every
    #: move: the first claim or assignment, held µs already closed, the open hold's start.
    picked_at = Timestamptz(null=True, default=None)
    held_us = BigInt(default=0)
    held_since = Timestamptz(null=True, default=None)
    #: The clock a live slot's pickup_biz_us / pickup_real_us were taken on at its pickup
    #: ('' for none; null: not taken): final from then, so the report reads them.
    pickup_clock = Varchar(length=20, null=True, default=None)
    #: The report's clock of a live slot (finished, else assigned; see ``store/deadlines.py``),
    #: copied from its ``sla_clock`` row whenever that is written: the report reads a live
    #: slot from here instead of probing ``sla_clock`` per slot. Null milestone: no clock.
    sla_milestone = Varchar(length=20, null=True, default=None)
    sla_calendar = Varchar(length=100, null=True, default=None)
    sla_budget_us = BigInt(null=True, default=None)
    sla_working_days = DoublePrecision(null=True, default=None)
    sla_pauses = JSONB(null=True, default=None)
    sla_met_at = Timestamptz(null=True, default=None)
    sla_due_at = Timestamptz(null=True, default=None)
    sla_breached_at = Timestamptz(null=True, default=None)
    #: Report measures, stored once the slot has ended (see ``store/slot_measures.py``):
    #: the milestone of the clock they were taken on ('' when none; null: not measured).
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
    status = Varchar(length=20, default="armed")
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


class Notification(Table, tablename="notification"):
    """The outbox: a message for one recipient, delivered from ``deliver_at`` (quiet hours).

    ``recipient`` is a principal's id, or ``email:<address>`` for an outsider
    (principal ids cannot hold a colon, so the two never collide).
    """

    id = BigSerial(primary_key=True)
    recipient = Varchar(length=330)
    #: The address and name to write to, as they were when it was written.
    recipient_email = Varchar(length=320, null=True, default=None)
    recipient_name = Varchar(length=200, null=True, default=None)
    #: The sender should mint the outsider a magic link (``mintNotificationLink``).
    link_requested = Boolean(default=False)
    #: The last link minted for it (revoked when another is minted).
    link = UUID(null=True, default=None)
    run = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade)
    slot = UUID(null=True, default=None)
    #: reminder | breach | timeout
    kind = Varchar(length=20)
    message = Text()
    details = JSONB(default="{}")
    created_at = Timestamptz(default=TimestamptzNow())
    deliver_at = Timestamptz(default=TimestamptzNow())


class MagicLink(Table, tablename="magic_link"):
    """A signed single-use link that lets an outsider complete one slot (see docs/magic-links.md).

    The token itself is never stored: only the SHA-256 of its random nonce, so a
    database leak yields no usable link.
    """

    id = UUID(primary_key=True)
    run = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade)
    slot = ForeignKey(references=Slot, null=False, on_delete=OnDelete.cascade)
    #: The one event the link may deposit.
    event = Varchar(length=100)
    nonce_hash = Varchar(length=64)
    recipient_name = Varchar(length=200, null=True, default=None)
    recipient_email = Varchar(length=320)
    created_by = Varchar(length=200)
    created_at = Timestamptz(default=TimestamptzNow())
    expires_at = Timestamptz()
    consumed_at = Timestamptz(null=True, default=None)
    revoked_at = Timestamptz(null=True, default=None)
    revoked_by = Varchar(length=200, null=True, default=None)
    #: Form submissions seen (a GET is never counted: mail scanners prefetch links).
    opens = Integer(default=0)
    opened_at = Timestamptz(null=True, default=None)


class LinkThrottle(Table, tablename="link_throttle"):
    """Refused link requests per client (hashed address): API nodes share it, hold nothing."""

    client = Varchar(length=64, primary_key=True)
    window_start = Timestamptz()
    failures = Integer(default=0)
    blocked_until = Timestamptz(null=True, default=None)


class ReportSession(Table, tablename="report_session"):
    """A signed-in browser of the report pages: short-lived, revoked on sign-out.

    ``id`` is the SHA-256 of the random value in the cookie, so the table alone
    cannot be used to sign in.
    """

    id = Varchar(length=64, primary_key=True)
    principal = Varchar(length=200, index=True)
    created_at = Timestamptz()
    expires_at = Timestamptz()
    revoked_at = Timestamptz(null=True, default=None)


class CalendarSpan(Table, tablename="calendar_span"):
    """The local years of a calendar materialised in ``calendar_interval`` (for reports).

    Always one contiguous span per calendar, so cumulative working time stays
    comparable across every materialised interval (see ``store/business_time.py``).
    """

    calendar = Varchar(length=100, primary_key=True)
    first_year = Integer()
    stop_year = Integer()
    #: Digest of the calendar definition the intervals were built from: an edit rebuilds them.
    digest = Varchar(length=100)
    updated_at = Timestamptz(default=TimestamptzNow())


class CalendarInterval(Table, tablename="calendar_interval"):
    """One working interval of a calendar on the UTC time line, with the working time before it.

    ``business_us(calendar, t0, t1)`` (a SQL function) is then two index lookups,
    which lets reports aggregate exact business time on the database.
    """

    id = BigSerial(primary_key=True)
    calendar = Varchar(length=100)
    starts_at = Timestamptz()
    ends_at = Timestamptz()
    #: Working microseconds from the span's anchor to ``starts_at`` (negative before it).
    cum_us = BigInt()


class IdempotencyKey(Table, tablename="idempotency_key"):
    """The first answer of a mutation sent with an ``idempotencyKey``, per actor and operation.

    Unique on (actor, operation, key) (``schema_extras``); written in the transaction of
    the mutation's effect, pruned after ``service.idempotency.RETENTION``.
    """

    id = BigSerial(primary_key=True)
    actor = Varchar(length=300)
    operation = Varchar(length=100)
    key = Varchar(length=200)
    #: SHA-256 of the mutation's input (without the key): the same key with another input
    #: is refused.
    fingerprint = Varchar(length=64)
    #: The answer to give again: {"ok": {...ids}} or {"refused": {code, message, facts}};
    #: null while only the effect is known (the answer was never recorded).
    answer = JSONB(null=True, default=None)
    created_at = Timestamptz(default=TimestamptzNow())


class EventBuffer(Table, tablename="event_buffer"):
    """An event that arrived before a slot waited for it, kept until one opens or it expires.

    Only events whose definition declares ``buffer=Buffer(...)`` are kept; a
    delivered or expired row is deleted (the timeline keeps the record).
    """

    id = BigSerial(primary_key=True)
    #: Indexed: every decision that opens a slot of a buffering workflow looks here.
    run = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade, index=True)
    event = Varchar(length=200)
    payload = JSONB(default="{}")
    #: The target's narrowing (``slotName``, ``item``), applied again at delivery.
    slot_name = Varchar(length=200, null=True, default=None)
    item = JSONB(null=True, default=None)
    actor = Varchar(length=200)
    arrived_at = Timestamptz(default=TimestamptzNow())
    #: Indexed: the worker drops kept events past their time.
    expires_at = Timestamptz(index=True)


class MetricSnapshot(Table, tablename="metric_snapshot"):
    """Gauges a worker computes every few seconds over live slots and clocks (by ``name``),
    read by ``/metrics`` in one lookup (``service/metrics.py``)."""

    name = Varchar(length=50, primary_key=True)
    taken_at = Timestamptz(default=TimestamptzNow())
    body = JSONB(default="{}")


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


#: Every table, in dependency order (referenced tables first).
class DeployedDefinition(Table, tablename="deployed_definition"):
    """A workflow definition (name and version) some start loaded, with its document.

    ``id`` is ``name@version``. Start-up compares each loaded definition's digest
    with the one recorded here (``service/deployments.py``).
    """

    id = Varchar(length=120, primary_key=True)
    workflow = Varchar(length=100)
    version = Integer()
    digest = Varchar(length=100)
    #: The JSON document of ``taskflow show`` (without the digest).
    document = JSONB(default="{}")
    first_seen_at = Timestamptz()
    last_seen_at = Timestamptz()
    #: When a start last replaced a drifted document (TASKFLOW_ALLOW_DEFINITION_DRIFT).
    drift_allowed_at = Timestamptz(null=True, default=None)


TABLES: tuple[type[Table], ...] = (Principal, Subject, Run, Slot, AuditEvent)
TABLES += (SlaClock, Timer, Notification)
TABLES += (MagicLink, LinkThrottle)
TABLES += (ReportSession,)
TABLES += (CalendarSpan, CalendarInterval)
TABLES += (IdempotencyKey,)
TABLES += (EventBuffer,)
TABLES += (MetricSnapshot,)
TABLES += (DeployedDefinition,)
TABLES += (Step, StepAttempt, StepOnce)
