-- What a principal holds (store/slots/held.py). /*:slot_columns*/ is runs.SLOT_COLUMNS.

-- name: held_slots
-- The slots holder $1 (text) holds, of workflows $2 (text[], NULL: any), in id order.
SELECT /*:slot_columns*/ FROM slot
WHERE holder = $1 AND status = 'claimed'
  AND ($2::text[] IS NULL OR workflow = ANY($2::text[]))
ORDER BY id

-- name: held_slots_by_run
-- (run, id) of the slots holder $1 (text) holds, in lock order (each run, then its slots).
SELECT run, id FROM slot WHERE holder = $1 AND status = 'claimed' ORDER BY run, id
