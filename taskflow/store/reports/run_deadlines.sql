-- Runs meeting and missing their run deadline (store/reports/run_deadlines.py).

-- name: by_workflow
-- Runs of workflows $3 (text[]) started in [$1, $2) that have a run deadline (its breach
-- timer row, whatever its status: its due_at is the deadline last in force), counted per
-- workflow at $4: missed (the breach fired, or it ended after its due instant, or it is live
-- and past it), met (ended by its due instant, no breach fired), open (live, not yet due).
SELECT d.workflow,
       count(*) AS runs,
       count(*) FILTER (WHERE NOT d.missed AND d.ended_at IS NOT NULL) AS met,
       count(*) FILTER (WHERE d.missed) AS missed,
       count(*) FILTER (WHERE NOT d.missed AND d.ended_at IS NULL) AS open
FROM (
    SELECT r.workflow, r.ended_at,
           (t.fired > 0 OR CASE WHEN r.ended_at IS NULL THEN $4 >= t.due_at
                                ELSE r.ended_at > t.due_at END) AS missed
    FROM run r
    JOIN timer t ON t.run = r.id AND t.key = r.id::text || ':deadline:breach'
    WHERE r.started_at >= $1 AND r.started_at < $2 AND r.workflow = ANY($3::text[])
) d
GROUP BY d.workflow
ORDER BY d.workflow;
