-- Timeline lines (store/timeline.py).

-- name: append_audits
-- Timeline lines of one or many runs, in the order given, as parallel arrays: runs $1
-- (text[] of uuids), slots $2 (text[] of uuids, NULL for a run's own line), kinds $3,
-- actors $4, reasons $5 (text[]), details $6 (text[] of JSON objects), instants $7
-- (timestamptz[]).
INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
SELECT run::uuid, slot::uuid, kind, actor, reason, details::jsonb, at
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
            $7::timestamptz[])
     WITH ORDINALITY AS a(run, slot, kind, actor, reason, details, at, n)
ORDER BY n
