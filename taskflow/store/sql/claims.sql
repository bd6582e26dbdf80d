-- claim-next (store/claims.py): take the most urgent open slot a principal may take.
-- Both statements choose the slot the same way (CTE next: open, the whole candidate rule
-- admits keys $2, the caller's filters in /*:where*/, urgency order, FOR UPDATE SKIP
-- LOCKED) and write the claim's own instant next.at, `(SELECT at FROM next)`, never the
-- caller's $3: claim-next reads the clock before it takes its slot, so a slot opened
-- meanwhile would otherwise be claimed, and its clock met, before it opened.
-- Markers filled at import: /*:held_us*/ the held time the claim closes
-- (business_sql.real_us), /*:running*/ a clock k not paused (risk_sql.not_paused),
-- /*:due_iso*/ c.assigned_due as Python's isoformat() in UTC, /*:slot_of_c*/ the slot's
-- columns of c, /*:run_columns_r*/ the run's and subject's columns (the run's own
-- prefixed r_), /*:context_run_columns*/ and /*:context_columns*/ the slot's run (prefixed
-- run_), clocks and timers (queries.CONTEXT), /*:slot_columns*/ the slot's.
-- The candidate predicate written out is candidacy.admits_sql's (a unit test checks it).

-- fragment: next
-- The slot to claim: open, admitted, filtered, the most urgent, locked (SKIP LOCKED).
next AS (
    SELECT sl.id, sl.run, sl.workflow, sl.state, sl.name,
           -- The claim's instant: never before the slot's last change (its opening, its
           -- clocks' start), which a writer may have committed after the caller read the clock.
           greatest($3::timestamptz, sl.updated_at) AS at
    FROM slot sl
    WHERE sl.status = 'open'
      AND (sl.audience && $2::text[] AND NOT sl.deny && $2::text[]
           AND (sl.residual = '[]'::jsonb
                OR CASE WHEN jsonb_array_length(sl.residual) = 1 AND sl.residual->0 ? 'key'
                   THEN (sl.residual->0->>'key') = ANY($2::text[])
                   ELSE residual_admits(sl.residual, $2::text[]) END))
      /*:where*/
    ORDER BY sl.due_at ASC NULLS LAST, sl.priority, sl.id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)

-- fragment: claim_set
-- The claim's SET list on slot s.
status = 'claimed', holder = $1, claimed_at = (SELECT at FROM next),
    version = s.version + 1, updated_at = (SELECT at FROM next),
    -- The first pickup, and the open hold the claim closes (an
    -- escalation may have reopened a held slot) added to the held time.
    picked_at = coalesce(s.picked_at, (SELECT at FROM next)),
    held_us = s.held_us + coalesce(greatest(0, /*:held_us*/), 0),
    held_since = (SELECT at FROM next)

-- fragment: claim_and_audit
-- The plain claim and its timeline line (claim_next, claim_next_bare).
/*fragment:next*/, claimed AS (
    UPDATE slot s SET /*fragment:claim_set*/
    FROM next WHERE s.id = next.id
    RETURNING s.*
), audited AS (
    -- The timeline line travels in the same statement: one round trip, not two.
    INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
    SELECT run, id, 'slot.claimed', $1, 'claim next', jsonb_build_object('slot', name),
           (SELECT at FROM next)
    FROM claimed
)

-- name: claim_next_plain
-- Claim the most urgent open slot and carry out its deadlines, when it is plain
-- (core/claim_facts.py): principal $1 (text), keys $2 (text[]), now $3 (timestamptz),
-- the declarations with milestones $4 (text[], "workflow version state slot") and the
-- reminders on the assigned milestone $5 (text[], "workflow version state slot part");
-- the filters' values follow. One row per chosen slot: candidate, plain (false: nothing
-- was written, the general path claims it), and the claimed slot with its run.
WITH /*fragment:next*/, plan AS (
    SELECT n.id, concat_ws(' ', n.workflow, r.definition_version, n.state, n.name) AS decl,
           k.id AS assigned_id, k.met_at AS assigned_met, k.due_at AS assigned_due,
           (k.id IS NULL OR k.met_at IS NOT NULL OR /*:running*/) AS running
    FROM next n JOIN run r ON r.id = n.run
    LEFT JOIN sla_clock k ON k.slot = n.id AND k.milestone = 'assigned'
), plain AS (
    SELECT p.* FROM plan p
    WHERE p.running
      -- A slot whose declaration has milestones but whose clocks never started
      -- has them started by the general path.
      AND (p.assigned_id IS NOT NULL OR p.decl <> ALL($4::text[])
           OR EXISTS (SELECT 1 FROM sla_clock a WHERE a.slot = p.id))
), claimed AS (
    UPDATE slot s SET /*fragment:claim_set*/,
                      -- The slot's copy of its report clock (store/report_kept.py)
                      -- when that is the assigned one (no finished clock).
                      sla_met_at = CASE WHEN s.sla_milestone = 'assigned'
                                             AND p.assigned_met IS NULL
                                        THEN (SELECT at FROM next) ELSE s.sla_met_at END,
                      due_at = (SELECT min(k.due_at) FROM sla_clock k
                                WHERE k.slot = s.id AND k.milestone <> 'assigned'
                                  AND k.met_at IS NULL AND /*:running*/)
    FROM plain p WHERE s.id = p.id
    RETURNING s.*, p.decl, p.assigned_id, p.assigned_met, p.assigned_due
), met AS (
    UPDATE sla_clock k SET met_at = (SELECT at FROM next), updated_at = (SELECT at FROM next)
    FROM claimed c WHERE k.id = c.assigned_id AND c.assigned_met IS NULL
), cancelled AS (
    UPDATE timer t SET status = 'cancelled', updated_at = (SELECT at FROM next)
    FROM claimed c
    WHERE t.slot = c.id AND t.status = 'armed'
      AND ((t.kind IN ('breach', 'at_risk') AND t.part = 'assigned')
           OR (t.kind = 'reminder' AND c.decl || ' ' || t.part = ANY($5::text[])))
), audited AS (
    INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
    SELECT c.run, c.id, l.kind, $1, l.reason, l.details, (SELECT at FROM next)
    FROM claimed c CROSS JOIN LATERAL (VALUES
        (1, 'slot.claimed', 'claim next', jsonb_build_object('slot', c.name)),
        (2, 'clock.met', NULL,
         CASE WHEN c.assigned_id IS NOT NULL AND c.assigned_met IS NULL
         THEN jsonb_build_object('slot', c.name, 'milestone', 'assigned',
                                 'due_at', /*:due_iso*/,
                                 'breached', CASE WHEN c.assigned_due < (SELECT at FROM next)
                                                  THEN /*:due_iso*/ END)
         END)
    ) AS l(n, kind, reason, details)
    WHERE l.details IS NOT NULL
    ORDER BY c.id, l.n
)
SELECT p.id AS candidate, c.id IS NOT NULL AS plain, /*:slot_of_c*/, /*:run_columns_r*/
FROM plan p LEFT JOIN claimed c ON c.id = p.id
LEFT JOIN run r ON r.id = c.run LEFT JOIN subject s ON s.id = r.subject

-- name: claim_next
-- Claim the most urgent open slot, with its timeline line, for the general path (the
-- service plans its deadlines and writes them in the same transaction): principal $1
-- (text), keys $2 (text[]), now $3 (timestamptz); the filters' values follow. The claimed
-- slot comes back with its run, clocks and timers; no row when none is open.
WITH /*fragment:claim_and_audit*/
SELECT /*:slot_of_c*/, /*:context_run_columns*/, /*:context_columns*/
FROM claimed c JOIN run r ON r.id = c.run JOIN subject s ON s.id = r.subject

-- name: claim_next_bare
-- claim_next without the slot's context (its parameters; the slot's columns only): the
-- bare claim with its timeline line, what benchmarks compare with.
WITH /*fragment:claim_and_audit*/
SELECT /*:slot_columns*/ FROM claimed
