-- Needs attention (store/operate/attention.py): one branch per reason, each read from its own
-- partial index (store/common/schema_extras.py; tests/integration/test_attention_index.py EXPLAINs
-- them). Every branch takes $1 the idle-before instant, $2 the expiring-before instant,
-- $3 workflows (text[], NULL: all) and gives the columns reason, since, ref, run,
-- workflow, state, slot, timer, principal, until, detail. /*:wanted*/ is the union of the
-- branches narrowed to reasons $4 (text[], NULL: all), filled at import.

-- name: route_unmatched
SELECT 'ROUTE_UNMATCHED' AS reason, r.unmatched_at AS since, r.id::text AS ref,
       r.id AS run, r.workflow, r.state, NULL::uuid AS slot, NULL::bigint AS timer,
       NULL::text AS principal, NULL::timestamptz AS until,
       'no route of ' || r.state || ' matched' AS detail
FROM run r
WHERE r.unmatched_at IS NOT NULL AND r.status = 'active'
  AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))

-- name: timer_dead
SELECT 'TIMER_DEAD', COALESCE(t.failed_at, t.updated_at), t.id::text, r.id, r.workflow,
       r.state, t.slot, t.id, NULL, NULL,
       t.kind || ' ' || t.part || ': ' || COALESCE(t.last_error, '')
FROM timer t JOIN run r ON r.id = t.run
WHERE t.status = 'dead' AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))

-- name: timer_failing
SELECT 'TIMER_FAILING', COALESCE(t.planned_at, t.failed_at), t.id::text, r.id,
       r.workflow, r.state, t.slot, t.id, NULL, t.due_at,
       t.kind || ' ' || t.part || ' failed ' || t.attempts || ' time(s): '
         || COALESCE(t.last_error, '')
FROM timer t JOIN run r ON r.id = t.run
WHERE t.status = 'armed' AND t.attempts > 0
  AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))

-- name: held_by_inactive
SELECT 'HELD_BY_INACTIVE', COALESCE(s.held_since, s.claimed_at, s.updated_at),
       s.id::text, r.id, r.workflow, r.state, s.id, NULL, p.id, NULL,
       s.name || ' is held by deactivated ' || p.id
FROM principal p
JOIN slot s ON s.holder = p.id AND s.status = 'claimed'
JOIN run r ON r.id = s.run
WHERE NOT p.active AND ($3::text[] IS NULL OR s.workflow = ANY($3::text[]))

-- name: breached_unheld
SELECT 'BREACHED_UNHELD', s.sla_breached_at, s.id::text, r.id, r.workflow, r.state,
       s.id, NULL, NULL, NULL, s.name || ' breached ' || s.sla_milestone || ' unheld'
FROM slot s JOIN run r ON r.id = s.run
WHERE s.status = 'open' AND s.sla_breached_at IS NOT NULL
  AND ($3::text[] IS NULL OR s.workflow = ANY($3::text[]))

-- name: idle
SELECT 'IDLE', GREATEST(r.updated_at, (SELECT max(x.updated_at) FROM slot x
                                       WHERE x.run = r.id)),
       r.id::text, r.id, r.workflow, r.state, NULL, NULL, NULL, NULL,
       'no change in ' || r.state
FROM run r
WHERE r.status = 'active' AND r.updated_at < $1
  AND NOT EXISTS (SELECT 1 FROM slot x WHERE x.run = r.id AND x.updated_at >= $1)
  AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))

-- name: event_expiring
SELECT 'EVENT_EXPIRING', e.arrived_at, e.id::text, r.id, r.workflow, r.state, NULL,
       NULL, e.actor, e.expires_at, 'kept event ' || e.event || ' expires'
FROM event_buffer e JOIN run r ON r.id = e.run
WHERE e.expires_at <= $2 AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))

-- name: webhook_disabled
-- The run is that of the endpoint's oldest waiting (else latest) delivery; scoped readers
-- see endpoints whose workflows they all reach (those they could mend).
SELECT 'WEBHOOK_DISABLED', w.disabled_at, w.id::text, r.id, r.workflow, r.state, NULL,
       NULL, NULL, NULL, 'webhook endpoint ' || w.url || ' disabled: '
         || COALESCE(w.disabled_reason, '')
FROM webhook_endpoint w
CROSS JOIN LATERAL (SELECT d.run FROM webhook_delivery d WHERE d.endpoint = w.id
                    ORDER BY d.status = 'pending' DESC, d.id LIMIT 1) d
JOIN run r ON r.id = d.run
WHERE NOT w.enabled AND w.failing_since IS NOT NULL AND w.disabled_at IS NOT NULL
  AND ($3::text[] IS NULL
       OR (cardinality(w.workflows) > 0 AND w.workflows <@ $3::varchar[]))

-- name: step_parked
SELECT 'STEP_PARKED', st.updated_at, st.id::text, r.id, r.workflow, r.state, NULL,
       NULL, NULL, NULL,
       st.kind || ' ' || regexp_replace(st.action, '^taskflow_workflows_[^:]*:', '')
         || ' failed ' || st.attempts || ' time(s): '
         || COALESCE(st.last_error, '')
FROM step st JOIN run r ON r.id = st.run
WHERE st.status = 'parked' AND r.status = 'active' AND st.visit = r.visit
  AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))

-- name: compensation_failed
-- A saga's compensation whose last attempt failed and no operator resolved
-- (resolveCompensation; docs/composition.md, Sagas).
SELECT 'COMPENSATION_FAILED', rc.updated_at, rc.id::text, r.id, r.workflow, r.state, NULL,
       NULL, NULL, NULL,
       'compensation ' || rc.workflow || ' of step ' || rc.label || ' failed ('
         || (rc.outcome->>'failure') || ') ' || (rc.subject->>'attempt') || ' time(s): '
         || COALESCE(rc.outcome->>'reason', '')
FROM run_child rc JOIN run r ON r.id = rc.parent
WHERE rc.status = 'settled' AND rc.subject ? 'compensates'
  AND coalesce(rc.outcome->>'failure', '') <> '' AND NOT rc.outcome ? 'resolved'
  AND coalesce((rc.subject->>'attempt')::int, 1)
      >= coalesce((rc.subject->>'compensation_attempts')::int, 1)
  AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))

-- name: automation_stopped
-- A published automation flagged by the worker (docs/automations.md): the run is the one
-- whose event it stopped on. The automation table is small (a few per workflow).
SELECT 'AUTOMATION_STOPPED', a.updated_at, a.id::text, r.id, r.workflow, r.state, NULL,
       NULL, a.author, NULL, 'automation ' || a.name || ' stopped: ' || a.attention
FROM automation a JOIN run r ON r.id = a.attention_run
WHERE a.status = 'published' AND a.attention <> ''
  AND ($3::text[] IS NULL OR a.workflow = ANY($3::text[]))

-- name: items
-- A page in (since, reason, ref) order: after $5, $6, $7 the last (since, reason, ref)
-- seen (NULLs: from the start), at most $8 items.
SELECT reason, since, ref, run, workflow, state, slot, timer, principal, until, detail
FROM (/*:wanted*/) w
WHERE $5::timestamptz IS NULL OR (w.since, w.reason, w.ref) > ($5, $6::text, $7::text)
ORDER BY w.since, w.reason, w.ref LIMIT $8

-- name: count
-- How many items match in all.
SELECT count(*) FROM (/*:wanted*/) w

-- name: counts
-- How many items of each reason.
SELECT w.reason, count(*) AS n FROM (/*:wanted*/) w GROUP BY w.reason

-- name: wanted
-- A piece (attention._WANTED, filled into the statements above and the runs list's
-- needs-attention filter): the branches' union (/*:union*/, one parenthesized branch per
-- reason joined by UNION ALL) narrowed to reasons $4 (text[], NULL: all).
SELECT * FROM (/*:union*/) a WHERE ($4::text[] IS NULL OR a.reason = ANY($4::text[]))

-- name: run_ids
-- A piece (attention.run_ids_sql): the runs of the items of /*:wanted*/, its $1..$4
-- renumbered after the statement's own parameters.
SELECT w.run FROM (/*:wanted*/) w
