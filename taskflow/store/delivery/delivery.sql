-- Delivering notifications (store/delivery/delivery.py; states in core/delivery/delivery.py).

-- fragment: deliverable_now
-- Notification n may be delivered at $1 (its state and times; core/delivery/delivery.py).
n.delivery_state IN ('pending', 'sending', 'failed')
  AND n.deliver_at <= $1
  AND (n.delivery_state <> 'failed' OR n.retry_at <= $1)
  AND (n.delivery_state <> 'sending' OR n.lease_until <= $1)

-- name: take
-- A batch of deliverable notifications, leased: $1 now, $2 the lease's id, $3 its end,
-- $4 how many, $5 workflows (NULL: all), $6 outsiders' only, $7 only those with an address.
-- SKIP LOCKED: a concurrent taker passes over the rows this one holds, so no two takers
-- ever lease one notification.
WITH due AS (
    SELECT n.id FROM notification n
    WHERE /*fragment:deliverable_now*/
      AND ($5::text[] IS NULL OR n.run IN (SELECT id FROM run WHERE workflow = ANY($5::text[])))
      AND (NOT $6::boolean OR n.recipient LIKE 'email:%')
      AND (NOT $7::boolean OR n.recipient_email IS NOT NULL)
    ORDER BY n.deliver_at, n.id
    LIMIT $4
    FOR UPDATE OF n SKIP LOCKED
)
UPDATE notification SET delivery_state = 'sending', lease = $2, lease_until = $3,
    attempts = notification.attempts + 1, retry_at = NULL
FROM due WHERE notification.id = due.id
RETURNING notification.*

-- name: deliverable
-- The deliverable-now listing, oldest first: $1 now, $2 after this id, $3 how many,
-- $4 workflows (NULL: all), $5 outsiders' only, $6 one recipient (NULL: any).
SELECT n.* FROM notification n
WHERE /*fragment:deliverable_now*/
  AND ($4::text[] IS NULL OR n.run IN (SELECT id FROM run WHERE workflow = ANY($4::text[])))
  AND (NOT $5::boolean OR n.recipient LIKE 'email:%')
  AND ($6::text IS NULL OR n.recipient = $6::text)
  AND n.id > $2
ORDER BY n.id
LIMIT $3

-- name: held
-- One notification if the lease $2 still holds it (sending), locked: $1 its id.
SELECT * FROM notification
WHERE id = $1 AND lease = $2 AND delivery_state = 'sending'
FOR UPDATE

-- name: mark_sent
-- $1 id, $2 lease, $3 when it was sent.
UPDATE notification SET delivery_state = 'sent', sent_at = $3, lease = NULL, lease_until = NULL
WHERE id = $1 AND lease = $2 AND delivery_state = 'sending'
RETURNING *

-- name: mark_failed
-- $1 id, $2 lease, $3 the new state (failed or dead), $4 next try (NULL: none), $5 the error.
UPDATE notification SET delivery_state = $3, retry_at = $4, last_error = $5,
    lease = NULL, lease_until = NULL
WHERE id = $1 AND lease = $2 AND delivery_state = 'sending'
RETURNING *

-- name: by_ids
-- Notifications by id ($1), oldest first (a take answered again).
SELECT * FROM notification WHERE id = ANY($1::bigint[]) ORDER BY id
