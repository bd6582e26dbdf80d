-- The one writer of a decision (taskflow/store/common/unit_of_work.py): each statement writes one
-- table for every run of the decision (or of a worker's batch), over arrays bound as
-- parameters and unnested on the server.

-- name: update_runs
-- Runs as they now are; each bumps its version by its number of decisions.
-- $1 ids, $2 states, $3 statuses, $4 visits, $5 state_entered_at, $6 ended_at,
-- $7 version bumps, $8 now, $9 unmatched_at, $10 results of automatic steps (JSON text:
-- the run was read under its lock, so they are the stored ones and what the decision added).
UPDATE run SET state = u.state, status = u.status, visit = u.visit,
               state_entered_at = u.entered, ended_at = u.ended, updated_at = $8,
               version = run.version + u.writes, unmatched_at = u.unmatched,
               step_results = u.results::jsonb
FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[],
            $6::timestamptz[], $7::int[], $9::timestamptz[], $10::text[])
     AS u(id, state, status, visit, entered, ended, writes, unmatched, results)
WHERE run.id = u.id::uuid

-- name: deadlines
-- Clocks, due instants (with the time to pickup and the copy of the report clock), the
-- timeline lines, the timer rows and the workers' wake-up, as ONE statement of
-- data-modifying CTEs (each touches other rows; an empty array writes nothing).
-- $1 now;
-- clocks: $2 slot, $3 run, $4 milestone, $5 budget_kind, $6 budget_us, $7 working_days,
--   $8 calendar, $9 started_at, $10 pauses (JSON text), $11 met_at, $12 due_at, $13 breached_at;
-- slots: $14 id, $15 visit, $16 due_at, $17 pickup clock, $18 pickup business us, $19 real us;
-- lines: $20 a JSON array of [run, slot, kind, actor, reason, details] each, $21 their
--   instants (timestamptz[], in the same order);
-- timers: $22 key, $23 run, $24 slot, $25 kind, $26 part, $27 due_at, $28 status, $29 fired,
--   $30 attempts, $31 last_error, $32 failed_at, $33 planned_at;
-- $34 whether to NOTIFY channel $35 (delivered at commit, folded per transaction);
-- $36 each clock's recomputes (JSON text, beside $2..$13).
WITH k AS (
    INSERT INTO sla_clock (id, slot, run, milestone, budget_kind, budget_us, working_days,
                           calendar, started_at, pauses, met_at, due_at, breached_at,
                           updated_at, recomputes)
    SELECT gen_random_uuid(), slot, run, milestone, budget_kind, budget_us, working_days,
           calendar, started_at, pauses::jsonb, met_at, due_at, breached_at, $1,
           recomputes::jsonb
    FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::bigint[], $7::float8[],
                $8::text[], $9::timestamptz[], $10::text[], $11::timestamptz[],
                $12::timestamptz[], $13::timestamptz[], $36::text[])
         AS c(slot, run, milestone, budget_kind, budget_us, working_days, calendar,
              started_at, pauses, met_at, due_at, breached_at, recomputes)
    ON CONFLICT (slot, milestone) DO UPDATE SET
        budget_kind = EXCLUDED.budget_kind, budget_us = EXCLUDED.budget_us,
        working_days = EXCLUDED.working_days, calendar = EXCLUDED.calendar,
        started_at = EXCLUDED.started_at, pauses = EXCLUDED.pauses, met_at = EXCLUDED.met_at,
        due_at = EXCLUDED.due_at, recomputes = EXCLUDED.recomputes,
        -- A recompute judges the breach again from the ledger (a retroactive one may
        -- withdraw it); otherwise the first record stays.
        breached_at = CASE WHEN sla_clock.recomputes IS DISTINCT FROM EXCLUDED.recomputes
                           THEN EXCLUDED.breached_at
                           ELSE COALESCE(sla_clock.breached_at, EXCLUDED.breached_at) END,
        updated_at = EXCLUDED.updated_at
    RETURNING slot, milestone, calendar, budget_us, working_days, pauses, met_at, due_at,
              breached_at
),
-- Each slot's report clock among the upserted rows (finished, else assigned).
-- ``take``: ``assigned`` never replaces a ``finished`` copy (the only milestones).
r AS (
    SELECT DISTINCT ON (k.slot) k.*,
           (k.milestone = 'finished' OR o.sla_milestone IS DISTINCT FROM 'finished') AS take
    FROM k JOIN slot o ON o.id = k.slot
    ORDER BY k.slot, k.milestone DESC
),
sl AS (
    UPDATE slot s SET visit = d.visit, due_at = d.due,
        pickup_clock = coalesce(d.clock, s.pickup_clock),
        pickup_biz_us = coalesce(d.biz, s.pickup_biz_us),
        pickup_real_us = coalesce(d.real, s.pickup_real_us),
        sla_milestone = CASE WHEN r.take THEN r.milestone ELSE s.sla_milestone END,
        sla_calendar = CASE WHEN r.take THEN r.calendar ELSE s.sla_calendar END,
        sla_budget_us = CASE WHEN r.take THEN r.budget_us ELSE s.sla_budget_us END,
        sla_working_days = CASE WHEN r.take THEN r.working_days ELSE s.sla_working_days END,
        sla_pauses = CASE WHEN r.take THEN r.pauses ELSE s.sla_pauses END,
        sla_met_at = CASE WHEN r.take THEN r.met_at ELSE s.sla_met_at END,
        sla_due_at = CASE WHEN r.take THEN r.due_at ELSE s.sla_due_at END,
        sla_breached_at = CASE WHEN r.take THEN r.breached_at ELSE s.sla_breached_at END
    FROM unnest($14::uuid[], $15::int[], $16::timestamptz[], $17::text[], $18::bigint[],
                $19::bigint[]) AS d(id, visit, due, clock, biz, real)
    LEFT JOIN r ON r.slot = d.id
    WHERE s.id = d.id
      AND ((s.visit, s.due_at) IS DISTINCT FROM (d.visit, d.due) OR r.take
           OR (d.clock IS NOT NULL AND (s.pickup_clock, s.pickup_biz_us, s.pickup_real_us)
               IS DISTINCT FROM (d.clock, d.biz, d.real)))
),
a AS (
    INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
    SELECT (l->>0)::uuid, (l->>1)::uuid, l->>2, l->>3, l->>4, l->5, at
    FROM ROWS FROM (jsonb_array_elements($20::jsonb), unnest($21::timestamptz[]))
         WITH ORDINALITY AS a(l, at, n)
    ORDER BY n
),
w AS (
    INSERT INTO timer AS t (key, run, slot, kind, part, due_at, status, fired, updated_at,
                            attempts, last_error, failed_at, planned_at)
    SELECT key, run, slot, kind, part, due_at, status, fired, $1, attempts, last_error,
           failed_at, planned_at
    FROM unnest($22::text[], $23::uuid[], $24::uuid[], $25::text[], $26::text[],
                $27::timestamptz[], $28::text[], $29::int[], $30::int[], $31::text[],
                $32::timestamptz[], $33::timestamptz[])
         AS u(key, run, slot, kind, part, due_at, status, fired, attempts, last_error,
              failed_at, planned_at)
    ON CONFLICT (key) DO UPDATE SET
        due_at = EXCLUDED.due_at, status = EXCLUDED.status, fired = EXCLUDED.fired,
        fired_at = CASE WHEN EXCLUDED.fired > t.fired THEN EXCLUDED.updated_at
                        ELSE t.fired_at END,
        attempts = EXCLUDED.attempts, last_error = EXCLUDED.last_error,
        failed_at = EXCLUDED.failed_at, planned_at = EXCLUDED.planned_at,
        updated_at = EXCLUDED.updated_at
)
SELECT CASE WHEN $34 THEN pg_notify($35, '') END

-- name: mark_breached
-- Record breaches (the first record of each stays), and the slot's copy of its report clock.
-- $1 slots, $2 milestones, $3 instants.
WITH k AS (
    UPDATE sla_clock SET breached_at = COALESCE(sla_clock.breached_at, u.at)
    FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(slot, milestone, at)
    WHERE sla_clock.slot = u.slot::uuid AND sla_clock.milestone = u.milestone
    RETURNING sla_clock.slot, sla_clock.milestone, sla_clock.breached_at
)
UPDATE slot s SET sla_breached_at = k.breached_at
FROM k WHERE s.id = k.slot AND s.sla_milestone = k.milestone
