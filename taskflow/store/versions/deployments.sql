-- Statements of store/versions/deployments.py: the registry of deployed definitions
-- (deployed_definition) and live runs per definition version (docs/versions.md).

-- name: lock
-- Serialize starts that record definitions until the transaction ends: $1 the lock key.
SELECT pg_advisory_xact_lock($1)

-- name: recorded
-- Every recorded definition, by name then version.
SELECT workflow, version, digest, document, first_seen_at, last_seen_at, drift_allowed_at
FROM deployed_definition
ORDER BY workflow, version

-- name: live_runs
-- How many live runs each (workflow, definition version) has.
SELECT workflow, definition_version, count(*) AS n FROM run
WHERE status = 'active'
GROUP BY workflow, definition_version

-- name: record
-- Record definition $1 (id "name@version"): $2 workflow, $3 version, $4 digest,
-- $5 document (jsonb), first or again seen at $6; $7 true when a drifted document may
-- replace the recorded one (marks drift_allowed_at).
INSERT INTO deployed_definition (id, workflow, version, digest, document,
                                 first_seen_at, last_seen_at, drift_allowed_at)
VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $6::timestamptz,
        CASE WHEN $7::boolean THEN $6::timestamptz END)
ON CONFLICT (id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at,
    digest = EXCLUDED.digest, document = EXCLUDED.document,
    drift_allowed_at = COALESCE(EXCLUDED.drift_allowed_at, deployed_definition.drift_allowed_at)

-- name: live_by_state
-- How many live runs of workflow $1 each (definition version, state) has.
SELECT definition_version, state, count(*) AS n FROM run
WHERE workflow = $1 AND status = 'active'
GROUP BY definition_version, state

-- name: lock_batch
-- Lock (run rows, in id order: the lock order) up to $4 live runs of workflow $1 parked
-- at one of the (version, state) pairs $2 (int[]) / $3 (text[]); their ids.
SELECT id FROM run
WHERE workflow = $1 AND status = 'active'
  AND (definition_version, state) IN (SELECT * FROM unnest($2::int[], $3::text[]))
ORDER BY id LIMIT $4
FOR UPDATE

-- name: set_version
-- Put locked run $1 on definition version $2 with digest $3, updated at $4.
UPDATE run SET definition_version = $2, definition_digest = $3, updated_at = $4,
               version = version + 1
WHERE id = $1
