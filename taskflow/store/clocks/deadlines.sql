-- Clock ledgers and timer rows (store/clocks/deadlines.py). /*:timer_columns*/ is the timer's
-- columns (timer_rows.TIMER_COLUMNS) and /*:slot_columns*/ the slot's
-- (runs.SLOT_COLUMNS), filled at import.

-- name: clocks_of
-- The clocks of the slots $1 (uuid[]), by slot, assigned before finished.
SELECT slot, milestone, budget_kind, budget_us, working_days, calendar, started_at,
       pauses, met_at, recomputes
FROM sla_clock WHERE slot = ANY($1::uuid[]) ORDER BY slot, milestone

-- name: timers_for
-- The timer rows of the slots $1 (uuid[]) and the run-level rows of run $2 (uuid; NULL:
-- none), in one read.
SELECT /*:timer_columns*/ FROM timer WHERE slot = ANY($1::uuid[]) OR (run = $2 AND slot IS NULL)

-- name: next_due
-- The nearest armed due instant later than $1 (timestamptz): how long a worker may sleep.
SELECT min(due_at) FROM timer WHERE status = 'armed' AND due_at > $1

-- name: slots_of_runs
-- The slots of the runs $1 (uuid[]), by run, in visit, name, item order.
SELECT /*:slot_columns*/ FROM slot WHERE run = ANY($1::uuid[])
ORDER BY run, visit, name, item_index, id

-- name: context_columns
-- A piece (no statement of its own; deadlines.CONTEXT_COLUMNS): columns that read a
-- just-written slot's clock ledgers and timer rows in the statement that wrote it (c is
-- the slot row): carrying out its deadlines then needs no further read.
(SELECT json_agg(json_build_array(k.milestone, k.budget_kind, k.budget_us, k.working_days,
                                  k.calendar, k.started_at, k.pauses, k.met_at,
                                  k.recomputes)
                 ORDER BY k.milestone)
   FROM sla_clock k WHERE k.slot = c.id) AS ctx_clocks,
(SELECT json_agg(json_build_array(t.id, t.key, t.kind, t.part, t.due_at, t.status, t.fired,
                                  t.planned_at))
   FROM timer t WHERE t.slot = c.id) AS ctx_timers

-- name: chain_facts
-- What the calendar chain reads of the slots $1 (uuid[]) to say which link measured their
-- clocks (core/clocks/chain.py): the declaration, the holder's own calendar (their working
-- hours' calendar, else theirs), the subject's attributes, the slot's audience (its teams).
SELECT sl.id AS slot, sl.workflow, r.definition_version, sl.state, sl.name, sl.holder,
       coalesce(p.working_hours->>'calendar', p.calendar) AS holder_calendar,
       j.attributes, sl.audience
FROM slot sl JOIN run r ON r.id = sl.run JOIN subject j ON j.id = r.subject
LEFT JOIN principal p ON p.id = sl.holder
WHERE sl.id = ANY($1::uuid[])
