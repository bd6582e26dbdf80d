-- Workflow insights (store/history/insights.py, docs/insights.md).

-- name: by_version
-- Per workflow and definition version: runs live now, live runs waiting on an automatic step
-- (a due or running step row), runs started / completed / cancelled since $1, and the
-- completed ones' end-to-end wall seconds at p50, p95, p99 with their number, the same in
-- business seconds on the workflow's calendar ($2 workflows, $3 their calendars; a run
-- older than the calendar's materialised intervals has none), and the live runs with an
-- item on the needs-attention list (the attention marker, parameters after $6); runs that
-- failed: cancelled, or completed in a terminal state marked ``failure`` (the (workflow,
-- version, state) triples $4, $5, $6); the only
-- marker narrows to the workflows of $2 (a workflow's page) or is empty (the list). Runs are
-- found by the indexes run_active_updated, run_started and run_ended.
SELECT r.workflow, r.definition_version AS version,
       count(*) FILTER (WHERE r.status = 'active') AS live,
       count(*) FILTER (WHERE r.status = 'active' AND EXISTS (
           SELECT 1 FROM step st WHERE st.run = r.id AND st.status IN ('due', 'running')))
         AS on_steps,
       count(*) FILTER (WHERE r.started_at >= $1) AS started,
       count(*) FILTER (WHERE r.status = 'completed' AND r.ended_at >= $1) AS finished,
       count(*) FILTER (WHERE r.status = 'cancelled' AND r.ended_at >= $1) AS cancelled,
       count(*) FILTER (WHERE r.ended_at >= $1 AND (r.status = 'cancelled'
           OR (r.status = 'completed' AND (r.workflow, r.definition_version, r.state) IN (
               SELECT * FROM unnest($4::text[], $5::int[], $6::text[])))))
         AS failed,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (
           ORDER BY extract(epoch FROM r.ended_at - r.started_at))
         FILTER (WHERE r.status = 'completed' AND r.ended_at >= $1) AS end_to_end,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY r.biz_us / 1e6)
         FILTER (WHERE r.status = 'completed' AND r.ended_at >= $1) AS end_to_end_business,
       count(*) FILTER (WHERE r.status = 'completed' AND r.ended_at >= $1
                          AND r.biz_us IS NOT NULL) AS business_samples,
       count(*) FILTER (WHERE r.id IN (/*:attention*/)) AS attention
FROM (SELECT r.*, /*:business*/ AS biz_us
      FROM run r LEFT JOIN unnest($2::text[], $3::text[]) AS wc(workflow, calendar)
        ON wc.workflow = r.workflow
      WHERE (r.status = 'active' OR r.started_at >= $1
             OR (r.ended_at >= $1 AND r.ended_at IS NOT NULL)) /*:only*/) r
WHERE r.status = 'active' OR r.started_at >= $1 OR (r.ended_at >= $1 AND r.ended_at IS NOT NULL)
GROUP BY r.workflow, r.definition_version
ORDER BY r.workflow, r.definition_version DESC

-- name: pipeline_now
-- Live runs of workflow $1 per state.
SELECT state, count(*) AS runs FROM run WHERE workflow = $1 AND status = 'active' GROUP BY state

-- name: pipeline_times
-- Time in state of workflow $1's visits that ended since $2 (effective visits; index
-- state_span_workflow_during): p50 and p95 wall seconds and their number, per state, and
-- how many of them were a return to a state the run had been in before (reopened: sent
-- back by a route, or re-entered by a redo).
SELECT s.state, count(*) AS samples,
       percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (
           ORDER BY extract(epoch FROM s.left_at - s.entered_at)) AS took,
       count(*) FILTER (WHERE EXISTS (
           SELECT 1 FROM state_span p WHERE p.run = s.run AND p.state = s.state
             AND p.entered_at < s.entered_at AND p.undone_by IS NULL)) AS reopened
FROM state_span s
WHERE s.workflow = $1 AND s.left_at >= $2 AND s.left_at < 'infinity' AND s.undone_by IS NULL
GROUP BY s.state

-- name: pipeline_slots
-- The slots of workflow $1 that ended (done or cancelled) since $2, per state: how many,
-- their pickup latency (opening to first claim or assignment, minus pauses, as stored when
-- the slot ended: wall and business on the slot's own calendar) at p50 and p95 with the
-- number picked up, and how many a holder gave back (a slot.released line) at least once.
-- Found by the index slot_ended_at (on the coalesce below).
SELECT sl.state, count(*) AS slots,
       count(sl.pickup_real_us) AS picked,
       percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY sl.pickup_real_us / 1e6)
         AS pickup,
       percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY sl.pickup_biz_us / 1e6)
         AS pickup_business,
       count(*) FILTER (WHERE EXISTS (
           SELECT 1 FROM audit_event e
           WHERE e.run = sl.run AND e.slot = sl.id AND e.kind = 'slot.released')) AS refused
FROM slot sl
WHERE sl.workflow = $1 AND coalesce(sl.satisfied_at, sl.cancelled_at) >= $2
GROUP BY sl.state

-- name: funnel
-- The runs of workflow $1 started since $2: per state, how many reached it (an effective
-- visit), how many are there now (active), and how many ended there (completed or
-- cancelled while in it).
SELECT s.state, count(DISTINCT s.run) AS reached,
       count(DISTINCT s.run) FILTER (WHERE r.state = s.state AND r.status = 'active') AS live,
       count(DISTINCT s.run) FILTER (WHERE r.state = s.state AND r.status = 'completed')
         AS completed,
       count(DISTINCT s.run) FILTER (WHERE r.state = s.state AND r.status = 'cancelled')
         AS cancelled
FROM run r JOIN state_span s ON s.run = r.id AND s.undone_by IS NULL
WHERE r.workflow = $1 AND r.started_at >= $2
GROUP BY s.state
ORDER BY reached DESC, s.state

-- name: breach_rates
-- Per workflow and version, the slots with a milestone clock that ended since $1 and how
-- many of them breached it (only: a workflow's page narrows to sl.workflow = $2; stored measures: measured_clock, '' without a clock, and
-- breach_from; the index slot_ended_at).
SELECT sl.workflow, r.definition_version AS version,
       count(*) FILTER (WHERE sl.measured_clock <> '') AS measured,
       count(*) FILTER (WHERE sl.measured_clock <> '' AND sl.breach_from IS NOT NULL)
         AS breached
FROM slot sl JOIN run r ON r.id = sl.run
WHERE coalesce(sl.satisfied_at, sl.cancelled_at) >= $1 /*:only*/
GROUP BY sl.workflow, r.definition_version
