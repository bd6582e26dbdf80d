-- Workflow insights (store/history/insights.py, docs/insights.md).

-- name: by_version
-- Per workflow and definition version: runs live now, live runs waiting on an automatic step
-- (a due or running step row), runs started / completed / cancelled since $1, and the
-- completed ones' end-to-end wall seconds at p50, p95, p99 with their number. Runs are
-- found by the indexes run_active_updated, run_started and run_ended.
SELECT r.workflow, r.definition_version AS version,
       count(*) FILTER (WHERE r.status = 'active') AS live,
       count(*) FILTER (WHERE r.status = 'active' AND EXISTS (
           SELECT 1 FROM step st WHERE st.run = r.id AND st.status IN ('due', 'running')))
         AS on_steps,
       count(*) FILTER (WHERE r.started_at >= $1) AS started,
       count(*) FILTER (WHERE r.status = 'completed' AND r.ended_at >= $1) AS finished,
       count(*) FILTER (WHERE r.status = 'cancelled' AND r.ended_at >= $1) AS cancelled,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (
           ORDER BY extract(epoch FROM r.ended_at - r.started_at))
         FILTER (WHERE r.status = 'completed' AND r.ended_at >= $1) AS end_to_end
FROM run r
WHERE r.status = 'active' OR r.started_at >= $1 OR (r.ended_at >= $1 AND r.ended_at IS NOT NULL)
GROUP BY r.workflow, r.definition_version
ORDER BY r.workflow, r.definition_version DESC

-- name: pipeline_now
-- Live runs of workflow $1 per state.
SELECT state, count(*) AS runs FROM run WHERE workflow = $1 AND status = 'active' GROUP BY state

-- name: pipeline_times
-- Time in state of workflow $1's visits that ended since $2 (effective visits; index
-- state_span_workflow_during): p50 and p95 wall seconds and their number, per state.
SELECT s.state, count(*) AS samples,
       percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (
           ORDER BY extract(epoch FROM s.left_at - s.entered_at)) AS took
FROM state_span s
WHERE s.workflow = $1 AND s.left_at >= $2 AND s.left_at < 'infinity' AND s.undone_by IS NULL
GROUP BY s.state
