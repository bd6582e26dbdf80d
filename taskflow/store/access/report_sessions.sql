-- Report page sessions (store/access/report_sessions.py), keyed by the SHA-256 of the cookie value.

-- name: create
-- A new session $1 (the hash) of principal $2, created at $3, expiring at $4.
INSERT INTO report_session (id, principal, created_at, expires_at) VALUES ($1, $2, $3, $4)

-- name: live_principal
-- The principal of session $1 when neither revoked nor expired at $2.
SELECT principal FROM report_session WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2

-- name: revoke
-- Revoke live session $1 at $2.
UPDATE report_session SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL

-- name: revoke_all
-- Revoke every live session of principal $1 at $2.
UPDATE report_session SET revoked_at = $2 WHERE principal = $1 AND revoked_at IS NULL

-- name: delete_ended
-- Forget sessions that expired or were revoked before $1.
DELETE FROM report_session WHERE expires_at < $1 OR revoked_at < $1
