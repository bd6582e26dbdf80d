-- The lists that carry load (store/slots/queries.py): the inbox, work lists and team queues,
-- the board, a run's timeline. Urgency is due_at (nulls last), then priority, then id.
-- /*:where*/ takes the filters the builder composes (store/common/sql_builder.py, fragments.sql),
-- /*:limit*/ a page's size; /*:row_columns*/, /*:slot_columns*/ and /*:run_columns*/ are
-- the column lists of store/slots/queries.py (filled at import), /*:slot_of_c*/,
-- /*:context_run_columns*/ and /*:context_columns*/ those of a slot written by a CTE
-- (alias c) with its run (prefixed run_), clocks and timers. The candidate predicate, written out here for
-- the principal's keys, is candidacy.admits_sql's (a unit test checks they agree).

-- fragment: inbox_slots
-- What principal $1 (text) can act on now: held by them, or open and their whole candidate
-- rule admits their keys $2 (text[]).
sl.status IN ('open', 'claimed')
  AND ((sl.status = 'claimed' AND sl.holder = $1)
       OR (sl.status = 'open'
           AND (sl.audience && $2::text[] AND NOT sl.deny && $2::text[]
                AND (sl.residual = '[]'::jsonb
                     OR CASE WHEN jsonb_array_length(sl.residual) = 1 AND sl.residual->0 ? 'key'
                        THEN (sl.residual->0->>'key') = ANY($2::text[])
                        ELSE residual_admits(sl.residual, $2::text[]) END))))

-- fragment: team_slots
-- Live slots held by principal $1 (text) or whose whole candidate rule admits keys $2.
sl.status IN ('pending', 'open', 'claimed')
  AND (sl.holder = $1
       OR (sl.audience && $2::text[] AND NOT sl.deny && $2::text[]
           AND (sl.residual = '[]'::jsonb
                OR CASE WHEN jsonb_array_length(sl.residual) = 1 AND sl.residual->0 ? 'key'
                   THEN (sl.residual->0->>'key') = ANY($2::text[])
                   ELSE residual_admits(sl.residual, $2::text[]) END)))

-- fragment: board_runs_for
-- Runs of workflow $1, ended ones too when $2, where principal $3 holds a live slot or whose
-- candidate or delegate rule admits their keys $4 (text[]).
WHERE r.workflow = $1 AND ($2 OR r.status = 'active')
  AND EXISTS (
      SELECT 1 FROM slot x WHERE x.run = r.id AND x.status IN ('pending', 'open', 'claimed')
        AND (x.holder = $3
             OR (x.audience && $4::text[] AND NOT x.deny && $4::text[]
                 AND (x.residual = '[]'::jsonb
                      OR CASE WHEN jsonb_array_length(x.residual) = 1 AND x.residual->0 ? 'key'
                         THEN (x.residual->0->>'key') = ANY($4::text[])
                         ELSE residual_admits(x.residual, $4::text[]) END))
             OR (x.delegates && $4::text[] AND NOT x.delegates_deny && $4::text[]
                 AND (x.delegates_residual = '[]'::jsonb
                      OR CASE WHEN jsonb_array_length(x.delegates_residual) = 1
                                   AND x.delegates_residual->0 ? 'key'
                         THEN (x.delegates_residual->0->>'key') = ANY($4::text[])
                         ELSE residual_admits(x.delegates_residual, $4::text[]) END))))

-- fragment: page_of_slots_from
-- A page of slots (alias sl) with their list columns: from here to page_of_slots_end the
-- slots are sorted and cut first, and only the kept rows are joined to their run and subject
-- (the planner underestimates `audience && keys`); the page's conditions go between.
SELECT /*:row_columns*/
FROM (
    SELECT sl.* FROM slot sl

-- fragment: page_of_slots_end
ORDER BY sl.due_at ASC NULLS LAST, sl.priority, sl.id LIMIT /*:limit*/
) sl
JOIN run r ON r.id = sl.run JOIN subject sub ON sub.id = r.subject
ORDER BY sl.due_at ASC NULLS LAST, sl.priority, sl.id

-- name: inbox_page
-- The most urgent slots principal $1 (text) can act on now: held by them, or open and
-- their whole candidate rule admits their keys $2 (text[]). Slots are sorted and cut first
-- and only the kept rows are joined (the planner underestimates `audience && keys`).
/*fragment:page_of_slots_from*/
    WHERE /*fragment:inbox_slots*/
      /*:where*/
/*fragment:page_of_slots_end*/

-- name: inbox_count
-- How many slots inbox_page lists across its pages: principal $1 (text), keys $2 (text[]).
SELECT count(*) FROM slot sl
WHERE /*fragment:inbox_slots*/
  /*:where*/

-- name: inbox_ids
-- The ids and runs of every slot inbox_page lists (a live subscription's starting view).
SELECT sl.id, sl.run FROM slot sl
WHERE /*fragment:inbox_slots*/
  /*:where*/

-- name: work_page
-- The most urgent live slots whoever holds them (no fixed parameters).
/*fragment:page_of_slots_from*/
    WHERE sl.status IN ('pending', 'open', 'claimed')
      /*:where*/
/*fragment:page_of_slots_end*/

-- name: work_count
-- How many slots work_page lists across its pages.
SELECT count(*) FROM slot sl
WHERE sl.status IN ('pending', 'open', 'claimed')
  /*:where*/

-- name: work_ids
-- The ids and runs of every slot work_page lists.
SELECT sl.id, sl.run FROM slot sl
WHERE sl.status IN ('pending', 'open', 'claimed')
  /*:where*/

-- name: team_page
-- A team member's view of the live slots: held by principal $1 (text) or whose whole
-- candidate rule admits their keys $2 (text[]), most urgent first.
/*fragment:page_of_slots_from*/
    WHERE /*fragment:team_slots*/
      /*:where*/
/*fragment:page_of_slots_end*/

-- name: team_count
-- How many slots team_page lists across its pages: principal $1 (text), keys $2 (text[]).
SELECT count(*) FROM slot sl
WHERE /*fragment:team_slots*/
  /*:where*/

-- name: team_ids
-- The ids and runs of every slot team_page lists: principal $1 (text), keys $2 (text[]).
SELECT sl.id, sl.run FROM slot sl
WHERE /*fragment:team_slots*/
  /*:where*/

-- name: timeline_count
-- A run's timeline length: run $1 (uuid), kinds $2 (text[], NULL: every kind).
SELECT count(*) FROM audit_event
WHERE run = $1 AND ($2::text[] IS NULL OR kind = ANY($2))

-- name: timeline_page
-- A run's timeline in order: run $1 (uuid), kinds $2 (text[], NULL: every kind),
-- after line id $3 (bigint), at most $4 lines.
SELECT id, slot, kind, actor, reason, details, at FROM audit_event
WHERE run = $1 AND ($2::text[] IS NULL OR kind = ANY($2)) AND id > $3
ORDER BY id LIMIT $4

-- name: board_count
-- How many runs of workflow $1 (text) a lead's board shows; $2 (boolean): ended runs too.
SELECT count(*) FROM run r WHERE r.workflow = $1 AND ($2 OR r.status = 'active')
  /*:where*/

-- name: board_page
-- A lead's board: runs of workflow $1 (text), $2 (boolean): ended runs too; oldest first.
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject
WHERE r.workflow = $1 AND ($2 OR r.status = 'active')
  /*:where*/
ORDER BY r.started_at, r.id LIMIT /*:limit*/

-- name: board_count_for
-- How many runs board_page_for shows (parameters as there).
SELECT count(*) FROM run r
/*fragment:board_runs_for*/
  /*:where*/

-- name: board_page_for
-- A non-lead's board: runs of workflow $1 (text), $2 (boolean): ended runs too, where
-- principal $3 (text) holds a live slot or whose candidate or delegate rule admits
-- their keys $4 (text[]); oldest first.
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject
/*fragment:board_runs_for*/
  /*:where*/
ORDER BY r.started_at, r.id LIMIT /*:limit*/

-- name: live_slots_of_runs
-- The live slots of runs $1 (uuid[]) in one query (board cards).
SELECT /*:slot_columns*/ FROM slot
WHERE run = ANY($1::uuid[]) AND status IN ('pending', 'open', 'claimed')
ORDER BY run, name, item_index, id

-- name: slot_move
-- Apply a claim, release or assign decided on the slot as it was: slot $1 (uuid), its
-- status $2 and version $3 then (the guard: no row when it moved meanwhile); its new
-- status $4, holder $5, claimed_at $6, version $7, picked_at $9, held_us $10 and held_since
-- $11; now $8. The written slot comes back with its run, clocks and timers (the
-- context columns of store/slots/queries.py).
WITH moved AS (
    UPDATE slot SET status = $4, holder = $5, claimed_at = $6, version = $7,
                    updated_at = $8, picked_at = $9, held_us = $10, held_since = $11
    WHERE id = $1 AND status = $2 AND version = $3
    RETURNING *
)
SELECT /*:slot_of_c*/, /*:context_run_columns*/, /*:context_columns*/
FROM moved c JOIN run r ON r.id = c.run JOIN subject s ON s.id = r.subject
