-- Idempotency keys (store/common/idempotency.py): one row per (actor, operation, key).

-- name: lock
-- Wait for any other request holding key text $1 (until this transaction ends).
SELECT pg_advisory_xact_lock(hashtextextended($1, 0))

-- name: find
-- The key of actor $1, operation $2, key $3: its input's fingerprint and first answer.
SELECT fingerprint, answer, created_at FROM idempotency_key
WHERE actor = $1 AND operation = $2 AND key = $3

-- name: wrote
-- Whether this transaction wrote anything yet.
SELECT txid_current_if_assigned() IS NOT NULL

-- name: mark_effect
-- Key $3 of actor $1 and operation $2 (fingerprint $4) had an effect at $5; no answer yet.
INSERT INTO idempotency_key (actor, operation, key, fingerprint, answer, created_at)
VALUES ($1, $2, $3, $4, NULL, $5)
ON CONFLICT (actor, operation, key) DO NOTHING

-- name: record
-- Key $3 of actor $1 and operation $2 (fingerprint $4) answers $5 (jsonb); created at $6.
INSERT INTO idempotency_key (actor, operation, key, fingerprint, answer, created_at)
VALUES ($1, $2, $3, $4, $5::jsonb, $6)
ON CONFLICT (actor, operation, key)
DO UPDATE SET answer = EXCLUDED.answer, fingerprint = EXCLUDED.fingerprint

-- name: forget
-- Drop key $3 of actor $1 and operation $2.
DELETE FROM idempotency_key WHERE actor = $1 AND operation = $2 AND key = $3

-- name: prune
-- Delete up to $2 keys created before $1, oldest first; how many went.
WITH gone AS (
    DELETE FROM idempotency_key WHERE id IN (
        SELECT id FROM idempotency_key WHERE created_at < $1 ORDER BY created_at LIMIT $2)
    RETURNING 1
)
SELECT count(*) FROM gone
