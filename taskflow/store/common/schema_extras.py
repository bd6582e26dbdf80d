"""The schema's parts Piccolo's table classes cannot declare: tables with a composite
primary key, partial, covering and GIN indexes, and SQL functions (``tables.py`` declares
the rest).

Each is created by a raw step in a migration; the schema test compares a
migrated database with the table classes plus these.
"""

from __future__ import annotations

from taskflow.store.automations import automations
from taskflow.store.clocks import calendar_feeds, team_calendars
from taskflow.store.common import sql
from taskflow.store.compose import children
from taskflow.store.files import uploads
from taskflow.store.history import partitions, spans
from taskflow.store.live import live
from taskflow.store.runs import run_watch
from taskflow.store.slots import candidacy, claims
from taskflow.store.workspaces import limits as workspace_limits
from taskflow.store.workspaces import schema as workspace_schema

#: Indexes beyond what the table classes can declare: (name, CREATE INDEX statement).
EXTRA_INDEXES: tuple[tuple[str, str], ...] = (
    ("principal_roles_gin", "CREATE INDEX principal_roles_gin ON principal USING gin (roles)"),
    (
        "subject_type_external_id_key",
        "CREATE UNIQUE INDEX subject_type_external_id_key"
        " ON subject (type, external_id, workspace)",
    ),
    # One live run per subject and workflow, a delayed start's included (migration
    # 2026-12-04T07:50).
    (
        "run_live_per_subject",
        "CREATE UNIQUE INDEX run_live_per_subject ON run (workflow, subject) "
        "WHERE status IN ('active', 'scheduled')",
    ),
    # The correlation lookup knows no workflow: the key leads (migration 2026-12-01T19:03).
    (
        "run_correlation_key",
        "CREATE INDEX run_correlation_key ON run (correlation_key) "
        "WHERE status = 'active' AND correlation_key IS NOT NULL",
    ),
    # The runs of a subject (raiseEvent by subject, updateSubject).
    ("run_subject", "CREATE INDEX run_subject ON run (subject)"),
    ("run_board", "CREATE INDEX run_board ON run (workflow, status, started_at, id)"),
    # Inbox: live slots by urgency, covering what the audience filter reads.
    (
        "slot_live_by_due",
        "CREATE INDEX slot_live_by_due ON slot (due_at, priority, id) "
        "INCLUDE (status, holder, audience, deny, workflow, state, name) "
        "WHERE status IN ('open', 'claimed')",
    ),
    (
        "slot_open_audience",
        # No pending list: slots that open again would pile up in it and every inbox
        # search scans it linearly (76 ms instead of 9 after a day of claims, bench/README.md).
        "CREATE INDEX slot_open_audience ON slot USING gin (audience) WITH (fastupdate = off) "
        "WHERE status = 'open'",
    ),
    # Claim-next scans open slots only; claimed rows must not pile up in front of it.
    (
        "slot_open_by_due",
        "CREATE INDEX slot_open_by_due ON slot (due_at, priority, id) WHERE status = 'open'",
    ),
    (
        "slot_held",
        "CREATE INDEX slot_held ON slot (holder, due_at) WHERE status = 'claimed'",
    ),
    ("slot_run_visit", "CREATE INDEX slot_run_visit ON slot (run, visit)"),
    ("audit_event_run_at", "CREATE INDEX audit_event_run_at ON audit_event (run, id)"),
)
EXTRA_INDEXES += (
    (
        "sla_clock_slot_milestone",
        "CREATE UNIQUE INDEX sla_clock_slot_milestone ON sla_clock (slot, milestone)",
    ),
    # Workers take due rows in due order; fired and cancelled rows stay out of the index.
    (
        "timer_armed_due",
        "CREATE INDEX timer_armed_due ON timer (due_at, id) WHERE status = 'armed'",
    ),
    ("timer_slot", "CREATE INDEX timer_slot ON timer (slot) WHERE slot IS NOT NULL"),
    ("timer_run", "CREATE INDEX timer_run ON timer (run)"),
    # Admins list dead timers (migration 2026-12-01T19:06).
    ("timer_dead", "CREATE INDEX timer_dead ON timer (id) WHERE status = 'dead'"),
    (
        "notification_recipient",
        "CREATE INDEX notification_recipient ON notification (recipient, id)",
    ),
)
EXTRA_INDEXES += (
    ("magic_link_slot", "CREATE INDEX magic_link_slot ON magic_link (slot, created_at)"),
    ("magic_link_run", "CREATE INDEX magic_link_run ON magic_link (run)"),
)
EXTRA_INDEXES += (
    # business_us(): the last interval starting at or before an instant, from the index alone.
    (
        "calendar_interval_lookup",
        "CREATE UNIQUE INDEX calendar_interval_lookup ON calendar_interval "
        "(calendar, starts_at) INCLUDE (ends_at, cum_us)",
    ),
    # Reports select slots by the instant they opened.
    ("slot_opened_at", "CREATE INDEX slot_opened_at ON slot (opened_at)"),
    # ... and measure on read only those without stored measures (live or not yet measured).
    (
        "slot_unmeasured_opened_at",
        "CREATE INDEX slot_unmeasured_opened_at ON slot (opened_at) "
        "WHERE measured_clock IS NULL OR status NOT IN ('cancelled', 'expired', 'satisfied')",
    ),
)

EXTRA_INDEXES += (
    # /metrics: the oldest open slot in one probe (migration 2026-12-01T19:10).
    (
        "slot_open_opened_at",
        "CREATE INDEX slot_open_opened_at ON slot (opened_at) WHERE status = 'open'",
    ),
)

EXTRA_INDEXES += (
    # One answer per actor, operation and key; a concurrent duplicate waits on it.
    (
        "idempotency_key_scope",
        "CREATE UNIQUE INDEX idempotency_key_scope ON idempotency_key (actor, operation, key)",
    ),
    (
        "idempotency_key_created",
        "CREATE INDEX idempotency_key_created ON idempotency_key (created_at)",
    ),
)

#: Needs attention (``store/operate/attention.py``): each reason reads one small partial index.
EXTRA_INDEXES += (
    (
        "run_unmatched",
        "CREATE INDEX run_unmatched ON run (unmatched_at) "
        "WHERE unmatched_at IS NOT NULL AND status = 'active'",
    ),
    (
        "run_active_updated",
        "CREATE INDEX run_active_updated ON run (updated_at) WHERE status = 'active'",
    ),
    (
        "timer_failing",
        "CREATE INDEX timer_failing ON timer (failed_at) WHERE status = 'armed' AND attempts > 0",
    ),
    (
        "slot_breached_unheld",
        "CREATE INDEX slot_breached_unheld ON slot (sla_breached_at) "
        "WHERE status = 'open' AND sla_breached_at IS NOT NULL",
    ),
    ("principal_inactive", "CREATE INDEX principal_inactive ON principal (id) WHERE NOT active"),
)

#: What a report reads of a slot that ended with its measures stored (``report_sql.py``:
#: group keys, filters, outcome and measures). The index below carries them all, so the
#: report reads those slots from the index alone (an index-only scan) instead of the wide
#: slot rows (payload, audiences, ledgers, clock copy). A slot enters it once, when it ends.
ENDED_REPORT_COLUMNS = (
    "workflow",
    "state",
    "name",
    "priority",
    "audience",
    "holder",
    "satisfied_by",
    "satisfied_at",
    "cancelled_at",
    "clock_met",
    "breach_from",
    "measured_clock",
    "pickup_biz_us",
    "pickup_real_us",
    "done_biz_us",
    "done_real_us",
    "worked_us",
    # The run, for grouping by the version it is on (migration 2026-12-01T21:35).
    "run",
)
EXTRA_INDEXES += (
    (
        "slot_ended_report",
        "CREATE INDEX slot_ended_report ON slot (opened_at) "
        f"INCLUDE ({', '.join(ENDED_REPORT_COLUMNS)}) "
        "WHERE measured_clock IS NOT NULL AND status IN ('cancelled', 'expired', 'satisfied')",
    ),
)
# Insights: the slots that ended in a window (migration 2026-12-04T16:20, history/insights.sql).
EXTRA_INDEXES += (
    (
        "slot_ended_at",
        "CREATE INDEX slot_ended_at ON slot ((coalesce(satisfied_at, cancelled_at)))",
    ),
)

#: SQL functions the schema declares: (name, CREATE FUNCTION statement), made by raw steps.
#: ``business_cum_us``: working µs from the calendar's anchor to ``t`` (the last interval
#: starting at or before ``t``, one index lookup); ``business_us``: business time between
#: two instants on a calendar, real time when the calendar is null.
EXTRA_FUNCTIONS: tuple[tuple[str, str], ...] = (
    (
        "business_cum_us",
        "CREATE FUNCTION business_cum_us(cal text, t timestamptz) RETURNS bigint "
        "LANGUAGE sql STABLE PARALLEL SAFE AS $$ "
        "SELECT i.cum_us + (extract(epoch FROM (least(t, i.ends_at) - i.starts_at)) "
        "* 1000000)::bigint FROM calendar_interval i "
        "WHERE i.calendar = cal AND i.starts_at <= t ORDER BY i.starts_at DESC LIMIT 1 $$",
    ),
    (
        "business_us",
        "CREATE FUNCTION business_us(cal text, t0 timestamptz, t1 timestamptz) RETURNS bigint "
        "LANGUAGE sql STABLE PARALLEL SAFE AS $$ "
        "SELECT CASE WHEN t0 IS NULL OR t1 IS NULL THEN NULL WHEN t1 <= t0 THEN 0::bigint "
        "WHEN cal IS NULL THEN (extract(epoch FROM (t1 - t0)) * 1000000)::bigint "
        "ELSE business_cum_us(cal, t1) - business_cum_us(cal, t0) END $$",
    ),
)
#: ``rule_holds`` and ``residual_admits``: a slot's residual candidate rules in SQL
#: (``store/slots/candidacy.py``).
EXTRA_FUNCTIONS += candidacy.FUNCTIONS
# The runs list, newest first (migration 2026-12-01T19:12, ``store/runs/run_list.py``).
EXTRA_INDEXES += (
    ("run_started", "CREATE INDEX run_started ON run (started_at, id)"),
    ("run_workflow_started", "CREATE INDEX run_workflow_started ON run (workflow, started_at, id)"),
    (
        "run_state_started",
        "CREATE INDEX run_state_started ON run (workflow, state, started_at, id)",
    ),
    (
        "run_correlation_any",
        "CREATE INDEX run_correlation_any ON run (correlation_key, started_at) "
        "WHERE correlation_key IS NOT NULL",
    ),
    ("run_ended", "CREATE INDEX run_ended ON run (ended_at) WHERE ended_at IS NOT NULL"),
)

EXTRA_INDEXES += (
    # Senders take deliverable notifications in deliver_at order (migration 2026-12-01T21:37).
    (
        "notification_deliverable",
        "CREATE INDEX notification_deliverable ON notification (deliver_at, id) "
        "WHERE delivery_state IN ('pending', 'sending', 'failed')",
    ),
)

# Retention's due runs of one workflow, oldest end first (migration 2026-12-01T21:34,
# ``operate/retention.sql``).
EXTRA_INDEXES += (
    (
        "run_workflow_ended",
        "CREATE INDEX run_workflow_ended ON run (workflow, ended_at) WHERE ended_at IS NOT NULL",
    ),
)
#: The event outbox (``store/delivery/webhooks.py``): deliveries due, each run's queue per endpoint,
#: an endpoint's log, events by instant (replays; migration 2026-12-01T21:36).
EXTRA_INDEXES += (
    (
        "webhook_delivery_due",
        "CREATE INDEX webhook_delivery_due ON webhook_delivery (next_at, id) "
        "WHERE status = 'pending'",
    ),
    (
        "webhook_delivery_queue",
        "CREATE INDEX webhook_delivery_queue ON webhook_delivery (endpoint, run, id) "
        "WHERE status = 'pending'",
    ),
    (
        "webhook_delivery_endpoint",
        "CREATE INDEX webhook_delivery_endpoint ON webhook_delivery (endpoint, id)",
    ),
    ("outbox_event_occurred", "CREATE INDEX outbox_event_occurred ON outbox_event (occurred_at)"),
)
SQL = sql.statements("delivery/webhooks")
EXTRA_FUNCTIONS += (("outbox_rows", SQL["outbox_function"]),)
#: Triggers: (name, CREATE TRIGGER statement), made by raw steps after their functions.
EXTRA_TRIGGERS: tuple[tuple[str, str], ...] = (("audit_event_outbox", SQL["outbox_trigger"]),)
# The live feed (migration 2026-12-04T08:30, ``store/live/live.py``): committed timeline
# lines announced to the processes serving subscriptions.
EXTRA_FUNCTIONS += live.FUNCTIONS
EXTRA_TRIGGERS += live.TRIGGERS
# Automatic steps (migration 2026-12-01T21:38, ``store/steps/steps.py``): workers take due steps
# (and running ones whose lease ran out) in due order; operators list parked ones.
EXTRA_INDEXES += (
    (
        "step_due",
        "CREATE INDEX step_due ON step (due_at, id) WHERE status IN ('due', 'running')",
    ),
    ("step_parked", "CREATE INDEX step_parked ON step (updated_at) WHERE status = 'parked'"),
    ("step_attempt_step", "CREATE UNIQUE INDEX step_attempt_step ON step_attempt (step, attempt)"),
    ("step_once_run_name", "CREATE UNIQUE INDEX step_once_run_name ON step_once (run, name)"),
)
# claim-next's writes on the slot it chose (migrations 2026-12-02T04:12 and 04:30,
# ``store/slots/claims.py``).
EXTRA_FUNCTIONS += ((claims.FUNCTION_NAME, claims.FUNCTION),)

# An awaited start's wake-ups (migration 2026-12-04T07:40, ``store/runs/run_watch.py``).
EXTRA_FUNCTIONS += (run_watch.FUNCTION,)
EXTRA_TRIGGERS += (run_watch.TRIGGER,)
# Child runs (migration 2026-12-04T08:10, ``store/compose/children.py``): what a worker acts on,
# the gauge of children in flight, and the trigger noting a run's end on its child rows.
EXTRA_INDEXES += (
    (
        "run_child_due",
        "CREATE INDEX run_child_due ON run_child (id) "
        "WHERE status IN ('starting', 'cancelling', 'ended')",
    ),
    (
        "run_child_in_flight",
        "CREATE INDEX run_child_in_flight ON run_child (id) "
        "WHERE status IN ('starting', 'live', 'cancelling', 'ended')",
    ),
    (
        "run_child_compensations",
        "CREATE INDEX run_child_compensations ON run_child (status) WHERE subject ? 'compensates'",
    ),
)
EXTRA_FUNCTIONS += (children.FUNCTION,)
EXTRA_TRIGGERS += (children.TRIGGER,)

# State spans (migration 2026-12-04T08:45, ``store/history/spans.py``): "which runs were in S
# at T" reads the spans of S not left by T from one index, ``stateCounts`` a workflow's; the
# trigger closes a run's one standing span and an undo finds the span of the line it rewinds.
EXTRA_INDEXES += spans.INDEXES
EXTRA_FUNCTIONS += (("state_spans", spans.FUNCTION),)
EXTRA_TRIGGERS += (("audit_event_state_spans", spans.TRIGGER),)
EXTRA_INDEXES += (
    ("automation_workflow", "CREATE INDEX automation_workflow ON automation (workflow, status)"),
    # Exactly once per event: the worker's decision row conflicts on a second take.
    (
        "automation_act_once",
        "CREATE UNIQUE INDEX automation_act_once ON automation_act (automation, event_key)",
    ),
    # Enrollment once per subject or per window looks up the acts on a subject.
    (
        "automation_act_enrolled",
        "CREATE INDEX automation_act_enrolled ON automation_act (automation, subject, event_at) "
        "WHERE outcome = 'act'",
    ),
    # The automations listening to a workflow's trigger: the queueing trigger's lookups
    # (migration 2026-12-04T18:10).
    (
        "automation_listening",
        "CREATE INDEX automation_listening ON automation "
        "(workflow, ((document -> 'trigger') ->> 'on')) "
        "WHERE automation.status = 'published' AND automation.attention = ''",
    ),
    # Waiting actions by when their delay ends (the lane's sweep).
    (
        "automation_pending_due",
        "CREATE INDEX automation_pending_due ON automation_pending (due_at, id)",
    ),
    # The worker's sweep forgets uploads older than a day.
    (
        "file_upload_uploaded_at",
        "CREATE INDEX file_upload_uploaded_at ON file_upload (uploaded_at)",
    ),
)
#: Who uploaded each stored file (store/files/uploads.py): one row per uploader and file.
EXTRA_TABLES: tuple[tuple[str, str], ...] = (uploads.TABLE,)
EXTRA_TABLES += (partitions.TABLE,)  # the timeline by month; before the workspace columns
EXTRA_TABLES += (partitions.SPANS_TABLE,)  # state spans by month (migration 2026-12-05T02:00)
EXTRA_FUNCTIONS += (partitions.PARTITION_WALLS, partitions.MONTHS_FUNCTION)
EXTRA_FUNCTIONS += (partitions.FUNCTION, partitions.WALLS)
# Automations' queue of lines to decide (migration 2026-12-04T18:10, ``store/automations``).
EXTRA_TABLES += automations.TABLES
EXTRA_FUNCTIONS += automations.FUNCTIONS
EXTRA_TRIGGERS += automations.TRIGGERS
EXTRA_TABLES += (team_calendars.TABLE,)  # teams' own calendars (migration 2026-12-04T20:20)
EXTRA_TABLES += (calendar_feeds.TABLE,)  # holiday feeds' outcomes (migration 2026-12-05T01:20)
EXTRA_TABLES += (workspace_limits.TABLE,)  # requests per minute (migration 2026-12-05T01:40)

# Workspaces (docs/workspaces.md): the column of every held table, the trigger that gives a
# row its run's workspace, and the row-level security policies (declared with the triggers:
# they come last, on the finished tables).
EXTRA_TABLES += (("taskflow_workspace", workspace_schema.CURRENT),)
EXTRA_TABLES += tuple(("workspace_column", s) for s in workspace_schema.columns())
EXTRA_INDEXES += workspace_schema.INDEXES
EXTRA_INDEXES += (team_calendars.INDEX,)
EXTRA_FUNCTIONS += (("workspace_from_parent", workspace_schema.FUNCTION),)
EXTRA_TRIGGERS += tuple(workspace_schema.triggers())
EXTRA_TRIGGERS += tuple(("workspace_wall", s) for s in workspace_schema.policies())
