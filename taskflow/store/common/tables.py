"""Piccolo table classes: the declared schema, from which migrations are made.

Runtime queries go through asyncpg on explicit connections (see ``db.py``):
each use case owns one transaction on one connection, which keeps Piccolo's
context-variable transactions (a trap with concurrent tasks, STACK-NOTES.md)
out of the hot path. Piccolo declares the schema and runs the migrations.

Indexes Piccolo cannot declare (partial, covering, GIN) and the SQL functions
are listed in ``schema_extras.py`` (``EXTRA_INDEXES``, ``EXTRA_FUNCTIONS``,
also importable from here) and created by raw steps in the migrations; the
schema test treats them as part of the declaration.

The tables of runs (principals, subjects, runs, slots, timeline, clocks, timers) are
declared in ``run_tables.py``, those of automatic steps in ``step_tables.py``; both are
importable from here.
"""

from __future__ import annotations

from piccolo.columns import (
    JSONB,
    UUID,
    BigInt,
    BigSerial,
    Boolean,
    ForeignKey,
    Integer,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.columns.base import OnDelete
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from taskflow.store.automations import automation_tables
from taskflow.store.common.schema_extras import EXTRA_FUNCTIONS as EXTRA_FUNCTIONS
from taskflow.store.common.schema_extras import EXTRA_INDEXES as EXTRA_INDEXES
from taskflow.store.common.schema_extras import EXTRA_TABLES as EXTRA_TABLES
from taskflow.store.common.schema_extras import EXTRA_TRIGGERS as EXTRA_TRIGGERS
from taskflow.store.compose import compose_tables
from taskflow.store.delivery import webhook_tables
from taskflow.store.history.history_tables import StateSpan as StateSpan
from taskflow.store.operate import retention_tables
from taskflow.store.reports import forecast_tables
from taskflow.store.runs.run_tables import AuditEvent as AuditEvent
from taskflow.store.runs.run_tables import Principal as Principal
from taskflow.store.runs.run_tables import Run as Run
from taskflow.store.runs.run_tables import SlaClock as SlaClock
from taskflow.store.runs.run_tables import Slot as Slot
from taskflow.store.runs.run_tables import Subject as Subject
from taskflow.store.runs.run_tables import Timer as Timer
from taskflow.store.steps.step_tables import Step as Step
from taskflow.store.steps.step_tables import StepAttempt as StepAttempt
from taskflow.store.steps.step_tables import StepOnce as StepOnce
from taskflow.store.workspaces.workspace_tables import Workspace as Workspace


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
    #: pending | sending | sent | failed | dead (``core.delivery``, docs/delivery.md).
    delivery_state = Varchar(length=10, default="pending")
    #: Takes by a sender (each take counts, whatever came of it).
    attempts = Integer(default=0)
    last_error = Text(null=True, default=None)
    #: The sender holding it while ``sending``, and until when.
    lease = UUID(null=True, default=None)
    lease_until = Timestamptz(null=True, default=None)
    #: After a temporary failure: not taken again before this.
    retry_at = Timestamptz(null=True, default=None)
    sent_at = Timestamptz(null=True, default=None)


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
    comparable across every materialised interval (see ``store/clocks/business_time.py``).
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
    read by ``/metrics`` in one lookup (``service/reports/metrics.py``)."""

    name = Varchar(length=50, primary_key=True)
    taken_at = Timestamptz(default=TimestamptzNow())
    body = JSONB(default="{}")


#: Every table, in dependency order (referenced tables first).
class DeployedDefinition(Table, tablename="deployed_definition"):
    """A workflow definition (name and version) some start loaded, with its document.

    ``id`` is ``name@version``. Start-up compares each loaded definition's digest
    with the one recorded here (``service/versions/deployments.py``).
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


TABLES: tuple[type[Table], ...] = (Workspace, Principal, Subject, Run, Slot)
TABLES += (SlaClock, Timer, Notification)
TABLES += (MagicLink, LinkThrottle)
TABLES += (ReportSession,)
TABLES += (CalendarSpan, CalendarInterval)
TABLES += (IdempotencyKey,)
TABLES += (EventBuffer,)
TABLES += (MetricSnapshot,)
TABLES += (DeployedDefinition,)
TABLES += retention_tables.TABLES
TABLES += webhook_tables.TABLES
TABLES += (Step, StepAttempt, StepOnce)
TABLES += compose_tables.TABLES
TABLES += automation_tables.TABLES
TABLES += forecast_tables.TABLES
