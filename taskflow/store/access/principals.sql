-- Principals (store/access/principals.py). /*:read*/ is the columns a principal is read with
-- (principals._READ).

-- name: get
-- Principal $1 (text).
SELECT /*:read*/ FROM principal WHERE id = $1

-- name: get_many
-- The principals of ids $1 (text[]).
SELECT /*:read*/ FROM principal WHERE id = ANY($1)

-- name: lock_active
-- Whether principal $1 (text) is active, its row locked (NULL: no such principal).
SELECT active FROM principal WHERE id = $1 FOR UPDATE

-- name: upsert
-- Insert or update principal $1 (text): display name $2, email $3, roles $4 (text[]),
-- groups $5 (text[]), attributes $6 (jsonb), time zone $7, calendar $8, active $9 (NULL:
-- keep; a new one is active; false moves tokens_valid_after to now), now $10, powers $11
-- (jsonb), $12 (boolean): keep the stored powers, $13 (uuid) the workspace of a new one
-- (NULL: the transaction's). An existing principal is updated only from its own workspace:
-- an id another workspace holds returns no row and changes nothing (checked before the
-- row-level security wall would refuse the update: ON CONFLICT's WHERE comes first).
INSERT INTO principal (id, display_name, email, roles, groups, attributes, time_zone, calendar,
                       active, powers, created_at, updated_at, workspace)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, coalesce($9, true), $11, $10, $10,
        coalesce($13::uuid, taskflow_workspace()))
ON CONFLICT (id) DO UPDATE SET
    display_name = EXCLUDED.display_name, email = EXCLUDED.email,
    roles = EXCLUDED.roles, groups = EXCLUDED.groups,
    attributes = EXCLUDED.attributes, time_zone = EXCLUDED.time_zone,
    calendar = EXCLUDED.calendar, active = coalesce($9, principal.active),
    tokens_valid_after = CASE WHEN principal.active AND $9 = false THEN $10
                              ELSE principal.tokens_valid_after END,
    powers = CASE WHEN $12 THEN principal.powers ELSE EXCLUDED.powers END,
    updated_at = EXCLUDED.updated_at
WHERE principal.workspace = coalesce($13::uuid, taskflow_workspace())
RETURNING /*:read*/, (xmax = 0) AS created

-- name: deactivate
-- Deactivate principal $1 (text) at $2 (its earlier tokens refused from then).
UPDATE principal SET active = false, updated_at = $2,
    tokens_valid_after = CASE WHEN active THEN $2 ELSE tokens_valid_after END
WHERE id = $1
RETURNING /*:read*/

-- name: revoke_tokens
-- Refuse every token principal $1 (text) was issued before $2.
UPDATE principal SET tokens_valid_after = greatest(tokens_valid_after, $2), updated_at = $2
WHERE id = $1
RETURNING /*:read*/

-- name: page_count
-- How many principals match: role $1, group $2 (text, NULL: any), active $3 (boolean,
-- NULL: either), search $4 (text in id or display name, NULL: any).
SELECT count(*) FROM principal
WHERE ($1::text IS NULL OR $1 = ANY(roles))
  AND ($2::text IS NULL OR $2 = ANY(groups))
  AND ($3::bool IS NULL OR active = $3)
  AND ($4::text IS NULL OR id ILIKE '%' || $4 || '%' OR display_name ILIKE '%' || $4 || '%')

-- name: page
-- A page of principals by id: $1..$4 as page_count, after id $5 (NULL: from the first),
-- at most $6.
SELECT /*:read*/ FROM principal
WHERE ($1::text IS NULL OR $1 = ANY(roles))
  AND ($2::text IS NULL OR $2 = ANY(groups))
  AND ($3::bool IS NULL OR active = $3)
  AND ($4::text IS NULL OR id ILIKE '%' || $4 || '%' OR display_name ILIKE '%' || $4 || '%')
  AND ($5::text IS NULL OR id > $5)
ORDER BY id LIMIT $6

-- name: active
-- Every active principal by id.
SELECT /*:read*/ FROM principal WHERE active ORDER BY id

-- name: carrying_any
-- Active principals that may carry one of keys $1 (text[]) or have one of attributes $2
-- (text[]; the caller checks their values), by id.
SELECT /*:read*/ FROM principal
WHERE active AND (
    ('user:' || id) = ANY($1::text[])
    OR ('email:' || coalesce(email, '')) = ANY($1::text[])
    OR EXISTS (SELECT 1 FROM unnest(roles) r WHERE 'role:' || r = ANY($1::text[]))
    OR EXISTS (SELECT 1 FROM unnest(groups) g WHERE 'group:' || g = ANY($1::text[]))
    OR attributes ?| $2::text[])
ORDER BY id

-- name: get_checked
-- Principal $1 (text) with the digest of its whole row (fragment caller_unchanged checks
-- a statement's caller against it: any change of the row changes it).
SELECT /*:read*/, md5(principal::text) AS digest FROM principal WHERE id = $1

-- name: set_working_hours
-- Principal $1 (text)'s working hours $2 (jsonb, NULL: unset) at $3.
UPDATE principal SET working_hours = $2, updated_at = $3 WHERE id = $1
RETURNING /*:read*/

-- name: set_leave
-- Principal $1 (text)'s leave $2 (jsonb list) at $3.
UPDATE principal SET leave_spans = $2, updated_at = $3 WHERE id = $1
RETURNING /*:read*/

-- name: lock
-- Principal $1 (text), its row locked.
SELECT /*:read*/ FROM principal WHERE id = $1 FOR UPDATE
