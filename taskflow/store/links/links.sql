-- Magic links and the link throttle (store/links/links.py). /*:link_columns*/ is a link's
-- columns (links._COLUMNS), /*:link_as*/ the same as l_<name>, /*:run_columns_r*/ a run's
-- and its subject's as r_<name> (runs.run_columns), /*:slot_columns_c*/ slot c's.

-- name: insert
-- A new link: id $1, run $2, slot $3 (uuid), event $4, nonce hash $5, recipient name $6
-- and email $7, created by $8, created at $9, expires at $10.
INSERT INTO magic_link (id, run, slot, event, nonce_hash, recipient_name, recipient_email,
                        created_by, created_at, expires_at, opens)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0)

-- name: get
-- Link $1 (uuid) and its nonce hash.
SELECT /*:link_columns*/, nonce_hash FROM magic_link WHERE id = $1

-- name: get_with_target
-- Link $1 (uuid), its run and its slot in one snapshot; $2 is the nil id, probed when the
-- link does not exist so every token costs the same.
SELECT /*:link_as*/, l.nonce_hash AS l_nonce_hash, /*:run_columns_r*/, /*:slot_columns_c*/
FROM (SELECT $1::uuid AS id) k
LEFT JOIN magic_link l ON l.id = k.id
LEFT JOIN run r ON r.id = coalesce(l.run, $2)
LEFT JOIN subject s ON s.id = r.subject
LEFT JOIN slot c ON c.id = coalesce(l.slot, $2)

-- name: of_slot
-- The links of slot $1 (uuid), oldest first.
SELECT /*:link_columns*/ FROM magic_link WHERE slot = $1 ORDER BY created_at, id

-- name: consume
-- Spend link $1 (uuid) with nonce hash $2 at $3 (first opened at $4) if still usable.
UPDATE magic_link SET consumed_at = $3, opens = opens + 1, opened_at = coalesce(opened_at, $4)
WHERE id = $1 AND nonce_hash = $2 AND consumed_at IS NULL AND revoked_at IS NULL
  AND expires_at > $3
RETURNING /*:link_columns*/

-- name: count_open
-- Count a submission on usable link $1 (uuid) at $2 that did not spend it ($3: opened at).
UPDATE magic_link SET opens = opens + 1, opened_at = coalesce(opened_at, $3)
WHERE id = $1 AND consumed_at IS NULL AND revoked_at IS NULL AND expires_at > $2
RETURNING /*:link_columns*/

-- name: revoke
-- Revoke link $1 (uuid) at $2 by $3 (text) unless used or revoked already.
UPDATE magic_link SET revoked_at = $2, revoked_by = $3
WHERE id = $1 AND consumed_at IS NULL AND revoked_at IS NULL
RETURNING /*:link_columns*/

-- name: revoke_of_runs
-- Revoke every link of the runs $1 (uuid[]) neither used nor revoked yet, at $3 by $2 (text):
-- their subject is gone (deleteSubject). The runs are locked by the caller.
WITH revoked AS (
  UPDATE magic_link SET revoked_at = $3, revoked_by = $2
  WHERE run = ANY($1::uuid[]) AND consumed_at IS NULL AND revoked_at IS NULL
  RETURNING 1
)
SELECT count(*) FROM revoked

-- name: throttle
-- Client $1's throttle row.
SELECT window_start, failures, blocked_until FROM link_throttle WHERE client = $1

-- name: throttle_create
-- Client $1's throttle row, created empty at $2 unless it exists.
INSERT INTO link_throttle (client, window_start, failures) VALUES ($1, $2, 0)
ON CONFLICT (client) DO NOTHING

-- name: throttle_lock
-- Client $1's throttle row, locked.
SELECT window_start, failures, blocked_until FROM link_throttle WHERE client = $1 FOR UPDATE

-- name: throttle_save
-- Client $1's throttle: window start $2, failures $3, blocked until $4.
UPDATE link_throttle SET window_start = $2, failures = $3, blocked_until = $4 WHERE client = $1
