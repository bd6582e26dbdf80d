-- Statements of store/delivery/notifications.py: the notification outbox (docs/delivery.md).
-- /*:columns*/ is the module's column list of a notification row (notifications._COLUMNS).

-- name: insert
-- One notification: $1 recipient, $2 recipient_email, $3 recipient_name, $4 run (uuid),
-- $5 slot (uuid or NULL), $6 kind, $7 message, $8 details (jsonb), $9 created_at,
-- $10 deliver_at, $11 link_requested. Run once per row (executemany).
INSERT INTO notification (recipient, recipient_email, recipient_name, run, slot,
                          kind, message, details, created_at, deliver_at, link_requested)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)

-- name: count_of_recipient
-- How many notifications recipient $1 has.
SELECT count(*) FROM notification WHERE recipient = $1

-- name: page_of_recipient
-- Recipient $1's notifications after id $2, oldest first, at most $3.
SELECT /*:columns*/ FROM notification
WHERE recipient = $1 AND id > $2
ORDER BY id LIMIT $3

-- name: page_of_outsiders
-- Outsiders' (email:...) notifications after id $1, oldest first, at most $2.
SELECT /*:columns*/ FROM notification
WHERE recipient LIKE 'email:%' AND id > $1
ORDER BY id LIMIT $2

-- name: page_of_outsiders_in_workflows
-- Outsiders' notifications of runs of workflows $1 (text[]) after id $2, oldest first,
-- at most $3.
SELECT /*:columns*/ FROM notification
WHERE recipient LIKE 'email:%' AND run IN (SELECT id FROM run WHERE workflow = ANY($1::text[]))
  AND id > $2
ORDER BY id LIMIT $3

-- name: page
-- The whole outbox after id $1, oldest first, at most $2.
SELECT /*:columns*/ FROM notification
WHERE id > $1
ORDER BY id LIMIT $2

-- name: page_in_workflows
-- The notifications of runs of workflows $1 (text[]) after id $2, oldest first, at most $3.
SELECT /*:columns*/ FROM notification
WHERE run IN (SELECT id FROM run WHERE workflow = ANY($1::text[])) AND id > $2
ORDER BY id LIMIT $3

-- name: one
-- Notification $1.
SELECT /*:columns*/ FROM notification WHERE id = $1

-- name: one_locked
-- Notification $1, locked FOR UPDATE (link minting for it goes in turn).
SELECT /*:columns*/ FROM notification WHERE id = $1 FOR UPDATE

-- name: set_link
-- Notification $1's last minted link is $2 (uuid).
UPDATE notification SET link = $2 WHERE id = $1
