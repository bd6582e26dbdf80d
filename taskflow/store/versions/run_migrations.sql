-- name: rename_slots
-- Slots a migration keeps under a new state or name ($1 ids, $2 states, $3 names,
-- $4 waits_for, $5 now); the run's row is locked by the caller.
UPDATE slot
SET state = m.state, name = m.name, waits_for = m.waits_for, updated_at = $5
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS m(id, state, name, waits_for)
WHERE slot.id = m.id

-- name: live_states
-- Live runs per workflow, definition version and state (what start-up checks a declared
-- migration covers when a version is missing from the code).
SELECT workflow, definition_version, state, count(*) AS n
FROM run
WHERE status = 'active'
GROUP BY workflow, definition_version, state

-- name: rename_buffered
-- Events a run keeps for a slot by name follow the slot's new name ($1 run, $2 old names,
-- $3 new names).
UPDATE event_buffer
SET slot_name = m.new
FROM unnest($2::text[], $3::text[]) AS m(old, new)
WHERE event_buffer.run = $1 AND event_buffer.slot_name = m.old
