-- Timeline lines (store/runs/timeline.py).

-- name: append_audits
-- Timeline lines of one or many runs, in the order given: $1 a JSON array of [run, slot
-- (null for a run's own line), kind, actor, reason, details] each, $2 their instants
-- (timestamptz[], in the same order).
INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
SELECT (l->>0)::uuid, (l->>1)::uuid, l->>2, l->>3, l->>4, l->5, at
FROM ROWS FROM (jsonb_array_elements($1::jsonb), unnest($2::timestamptz[]))
     WITH ORDINALITY AS a(l, at, n)
ORDER BY n
