-- Condition fragments the builder (store/common/sql_builder.py) composes into statements'
-- /*:where*/ markers: the only conditions a caller may add. Each "$?" is one value,
-- numbered by the builder after the base statement's own parameters.

-- Slots (alias sl): the inbox, work lists, claim-next, reports (core.runs.filters.SlotFilter).

-- name: slot_workflow
sl.workflow = $?

-- name: slot_state
sl.state = $?

-- name: slot_name
sl.name = $?

-- name: slot_priority_at_most
sl.priority <= $?

-- name: slot_due_before
sl.due_at < $?

-- name: slot_holder
sl.holder = $?

-- name: slot_audience_any
sl.audience && $?::text[]

-- name: slot_run_in
sl.run = ANY($?::uuid[])

-- name: run_id_in
r.id = ANY($?::uuid[])

-- name: slot_status_in
sl.status = ANY($?::text[])

-- name: slot_workflow_in
sl.workflow = ANY($?::text[])

-- name: slot_after_in_urgency
-- Keyset: after (due_at, priority, id) in urgency order (due_at nulls last).
(sl.due_at > $? OR sl.due_at IS NULL OR (sl.due_at = $? AND (sl.priority, sl.id) > ($?, $?::uuid)))

-- name: slot_after_in_urgency_undue
-- Keyset: after (NULL, priority, id) in urgency order.
sl.due_at IS NULL AND (sl.priority, sl.id) > ($?, $?::uuid)

-- Runs (alias r): the runs list and the board (core.runs.run_filter.RunFilter).

-- name: run_workflow
r.workflow = $?

-- name: run_version
r.definition_version = $?

-- name: run_state
r.state = $?

-- name: run_status_in
r.status = ANY($?::text[])

-- name: run_subject_type
r.subject IN (SELECT sx.id FROM subject sx WHERE sx.type = $?)

-- name: run_subject_external_id
r.subject IN (SELECT sx.id FROM subject sx WHERE sx.external_id = $?)

-- name: run_subject
r.subject IN (SELECT sx.id FROM subject sx WHERE sx.type = $? AND sx.external_id = $?)

-- name: run_parent
r.id IN (SELECT rc.child FROM run_child rc WHERE rc.parent = $?::uuid)

-- name: run_correlation_key
r.correlation_key = $? AND r.correlation_key IS NOT NULL

-- name: run_started_from
r.started_at >= $?

-- name: run_started_before
r.started_at < $?

-- name: run_ended_from
r.ended_at >= $? AND r.ended_at IS NOT NULL

-- name: run_ended_before
r.ended_at < $? AND r.ended_at IS NOT NULL

-- name: run_workflow_in
r.workflow = ANY($?::text[])

-- name: run_after_in_start
-- Keyset: after (started_at, id) oldest first (the board).
(r.started_at, r.id) > ($?, $?::uuid)

-- name: run_before_in_start
-- Keyset: after (started_at, id) newest first (the runs list).
(r.started_at, r.id) < ($?, $?::uuid)

-- name: run_needs_attention
-- Runs with an item on the needs-attention list: the list's branches (store/operate/attention.py).
r.id IN (/*:inner*/)

-- name: run_needs_no_attention
r.id NOT IN (/*:inner*/)

-- Where a caller reads runs (core.runs.run_filter.RunReach): a slot x of the run r ...

-- name: run_reached_through_slot
-- ... any of the conditions composed into the marker holds for one of the run's slots.
EXISTS (SELECT 1 FROM slot x WHERE x.run = r.id AND /*:inner*/)

-- name: reach_holder
x.holder = $?

-- name: reach_satisfied_by
x.satisfied_by = $?

-- name: reach_candidate
-- The slot's plain candidate keys (and deny keys) admit the caller's keys (twice the same).
(x.audience && $?::text[] AND NOT x.deny && $?::text[])

-- name: reach_delegate
x.delegates && $?::text[]

-- name: reach_team
x.audience && $?::text[]

-- name: reach_team_workflow
x.workflow = ANY($?::text[])

-- The SLA report's slot filters (core.reports.ReportFilter) beside the slot_* ones above.

-- name: slot_priority
sl.priority = $?

-- name: slot_held_or_done_by
-- Whoever holds the slot, or satisfied it.
coalesce(sl.holder, sl.satisfied_by) = $?

-- name: slot_in_workspace
-- Slot sl is of workspace $? (uuid): a statement that runs outside a transaction, where no
-- workspace is set for row-level security, names it (docs/workspaces.md).
sl.workspace = $?::uuid

-- name: caller_unchanged
-- The statement's caller (principal id, then the digest of its row as read by
-- principals.sql get_checked) is unchanged: a statement run for a caller read earlier
-- acts only if nothing of its row changed since.
EXISTS (SELECT 1 FROM principal pr WHERE pr.id = $? AND md5(pr::text) = $?)

-- name: run_state_at
-- The run was, in its workflow, in the state at the instant given twice (its effective
-- visits, store/history/spans.sql; index state_span_state_during, from the index alone).
r.id IN (SELECT sp.run FROM state_span sp WHERE sp.workflow = $? AND sp.state = $?
                AND sp.left_at > $? AND sp.entered_at <= $? AND sp.undone_by IS NULL)
