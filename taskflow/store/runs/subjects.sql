-- Subjects, the tracked entities (store/runs/subjects.py).

-- name: upsert_many
-- Insert subjects or replace their attributes (a version moves only when they change), many
-- at once, in the order given: ids $1 (uuid[], used when new), types $2, external ids $3
-- (text[]; no pair twice), attributes $4 (a JSON array, one object each) at $5. A deleted
-- subject (gone_at) is never revived: no row comes back for it (startRun refuses).
INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
SELECT u.id, u.type, u.external_id, u.attributes, 1, $5, $5
FROM ROWS FROM (unnest($1::uuid[], $2::text[], $3::text[]), jsonb_array_elements($4::jsonb))
     WITH ORDINALITY AS u(id, type, external_id, attributes, n)
ORDER BY u.n
ON CONFLICT (workspace, type, external_id) DO UPDATE SET
    attributes = EXCLUDED.attributes,
    version = subject.version
              + (subject.attributes IS DISTINCT FROM EXCLUDED.attributes)::int,
    updated_at = CASE WHEN subject.attributes IS DISTINCT FROM EXCLUDED.attributes
                      THEN EXCLUDED.updated_at ELSE subject.updated_at END
WHERE subject.gone_at IS NULL
RETURNING id, type, external_id, attributes, version, gone_at, (xmax = 0) AS created

-- name: insert_new
-- Insert subject $1 (uuid) of type $2 and external id $3 with attributes $4 (jsonb) at $5;
-- nothing when the subject exists (a concurrent insert committed first).
INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
VALUES ($1, $2, $3, $4, 1, $5, $5)
ON CONFLICT (workspace, type, external_id) DO NOTHING
RETURNING id, type, external_id, attributes, version

-- name: find
-- The subject of type $1 and external id $2 (index subject_type_external_id_key).
SELECT id, type, external_id, attributes, version, gone_at FROM subject
WHERE type = $1 AND external_id = $2

-- name: find_locked
-- As find, its row locked (the subject comes before its runs in the lock order).
SELECT id, type, external_id, attributes, version, gone_at FROM subject
WHERE type = $1 AND external_id = $2
FOR NO KEY UPDATE

-- name: update
-- Replace subject $1's (uuid) attributes with $2 (jsonb) at $3.
UPDATE subject SET attributes = $2, version = version + 1, updated_at = $3
WHERE id = $1 RETURNING id, type, external_id, attributes, version, gone_at

-- name: mark_gone
-- Subject $1 (uuid, locked by find_locked) deleted at $2: kept for its runs' history, never
-- revived (deleteSubject, docs/runs-and-slots.md "When the subject is gone").
UPDATE subject SET gone_at = $2, updated_at = $2 WHERE id = $1 AND gone_at IS NULL
