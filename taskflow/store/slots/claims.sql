-- claim-next (store/slots/claims.py): take the most urgent open slot a principal may take.
-- Both statements choose the slot the same way (CTE next: open, the whole candidate rule
-- admits keys $2, the caller's filters in /*:where*/, urgency order, FOR UPDATE SKIP
-- LOCKED) and write the claim's own instant next.at, `(SELECT at FROM next)`, never the
-- caller's $3: claim-next reads the clock before it takes its slot, so a slot opened
-- meanwhile would otherwise be claimed, and its clock met, before it opened (the function
-- claim_plain is given next.at as its $3).
-- Markers filled at import: /*:held_us*/ the held time the claim closes
-- (business_sql.real_us), /*:running*/ a clock k not paused (risk_sql.not_paused),
-- /*:due_iso*/ claim_plain's v_due as Python's isoformat() in UTC, /*:slot_of_c*/ the slot's
-- columns of c, /*:claimed_columns*/ claim_plain's slot and run head as columns (the
-- run's prefixed r_, its subject's s_), /*:context_run_columns*/ and /*:context_columns*/ the slot's run (prefixed
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
-- (core/slots/claim_facts.py): principal $1 (text), keys $2 (text[]), now $3 (timestamptz),
-- the catalog's claim facts $4 (text, ClaimFacts.text: built once per catalog, one copy to
-- encode per call); the filters' values follow. One row per chosen slot: candidate, plain (false: nothing
-- was written, the general path claims it), and the claimed slot with what the answer
-- needs of its run (runs.RunHead: its columns prefixed r_, its subject's s_). The slot
-- is chosen here (planned per call: the best walk depends on the keys); the writes are
-- the function claim_plain's, whose statements each session plans once.
WITH /*fragment:next*/
SELECT n.id AS candidate, (f.claimed_slot).id IS NOT NULL AS plain, /*:claimed_columns*/
FROM next n
LEFT JOIN LATERAL claim_plain($1, n.id, n.at, $4::text) f ON true

-- name: claim_plain_function
-- The function claim_plain (migration 2026-12-04T20:30, schema_extras.EXTRA_FUNCTIONS;
-- 04:12 made its first version, 04:30 its result, 05:45 its generic plans): claim_next_plain's
-- writes on the slot $2 its caller chose and locked (FOR UPDATE): claimer $1 (text), the
-- claim's instant $3, the catalog's claim facts $4 (text, ClaimFacts.text: a fact a line,
-- each line between newlines: "M <decl>" a declaration with milestones, "H <decl>" one whose
-- calendar chain asks the holder, "R <decl> <part>" a reminder on the assigned milestone;
-- <decl> is "workflow version state slot"). It returns the claimed slot with what the answer
-- needs of its run (runs.RunHead: its definition version, state and status, its subject's
-- type, external id and attributes), or no row (nothing written) when the slot is not plain:
-- its assigned clock paused, its declaration's chain asks the holder (the general path
-- claims it and moves the clock onto the holder's calendar in the claim's own transaction),
-- or its declaration has milestones whose clocks never started. PL/pgSQL keeps the plans of
-- its statements for the session; a statement of data-modifying CTEs is planned anew on
-- every call, which cost more than running it (bench/README.md). Its statements read and
-- write by key (the slot's id, the clock's), so one generic plan each suits every call.
-- Lock order (docs/architecture.md): the slot (the caller's), its clock, its timers.
CREATE FUNCTION claim_plain(text, uuid, timestamptz, text)
RETURNS TABLE (claimed_slot slot, claimed_definition_version integer,
               claimed_run_state character varying, claimed_run_status character varying,
               claimed_subject_type character varying,
               claimed_subject_external_id character varying, claimed_subject_attributes jsonb)
LANGUAGE plpgsql ROWS 1 SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_decl text;
  v_clock uuid;
  v_met timestamptz;
  v_due timestamptz;
  v_running boolean;
  v_claimed slot;
BEGIN
  -- The run's head is read here with the slot's facts (claim-next locks no run: a read
  -- after the writes would be no fresher), the answer's columns set from it.
  SELECT concat_ws(' ', sl.workflow, r.definition_version, sl.state, sl.name), k.id, k.met_at,
         k.due_at, (k.id IS NULL OR k.met_at IS NOT NULL OR /*:running*/),
         r.definition_version, r.state, r.status, j.type, j.external_id, j.attributes
    INTO v_decl, v_clock, v_met, v_due, v_running,
         claimed_definition_version, claimed_run_state, claimed_run_status,
         claimed_subject_type, claimed_subject_external_id, claimed_subject_attributes
    FROM slot sl JOIN run r ON r.id = sl.run JOIN subject j ON j.id = r.subject
    LEFT JOIN sla_clock k ON k.slot = sl.id AND k.milestone = 'assigned'
   WHERE sl.id = $2;
  IF NOT v_running OR strpos($4, E'\nH ' || v_decl || E'\n') > 0
     OR (v_clock IS NULL AND strpos($4, E'\nM ' || v_decl || E'\n') > 0
         AND NOT EXISTS (SELECT 1 FROM sla_clock a WHERE a.slot = $2)) THEN
    RETURN;
  END IF;
  WITH next AS (SELECT $3 AS at)
  UPDATE slot s SET /*fragment:claim_set*/,
         -- The slot's copy of its report clock (store/report_kept.py) when that is the
         -- assigned one (no finished clock).
         sla_met_at = CASE WHEN s.sla_milestone = 'assigned' AND v_met IS NULL
                           THEN $3 ELSE s.sla_met_at END,
         due_at = (SELECT min(k.due_at) FROM sla_clock k
                   WHERE k.slot = s.id AND k.milestone <> 'assigned'
                     AND k.met_at IS NULL AND /*:running*/)
   WHERE s.id = $2
  RETURNING s.* INTO v_claimed;
  IF v_clock IS NOT NULL AND v_met IS NULL THEN
    UPDATE sla_clock k SET met_at = $3, updated_at = $3 WHERE k.id = v_clock;
  END IF;
  UPDATE timer t SET status = 'cancelled', updated_at = $3
   WHERE t.slot = $2 AND t.status = 'armed'
     AND ((t.kind IN ('breach', 'at_risk') AND t.part = 'assigned')
          OR (t.kind = 'reminder'
              AND strpos($4, E'\nR ' || v_decl || ' ' || t.part || E'\n') > 0));
  -- One statement for both lines (the outbox trigger runs once per statement).
  INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
  SELECT v_claimed.run, $2, l.kind, $1, l.reason, l.details, $3
  FROM (VALUES
      (1, 'slot.claimed', 'claim next', jsonb_build_object('slot', v_claimed.name)),
      (2, 'clock.met', NULL,
       CASE WHEN v_clock IS NOT NULL AND v_met IS NULL
       THEN jsonb_build_object('slot', v_claimed.name, 'milestone', 'assigned',
                               'due_at', /*:due_iso*/,
                               'breached', CASE WHEN v_due < $3 THEN /*:due_iso*/ END)
       END)
  ) AS l(n, kind, reason, details)
  WHERE l.details IS NOT NULL
  ORDER BY l.n;
  claimed_slot := v_claimed;
  RETURN NEXT;
END
$$

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
