-- The timeline partitioned by month (migration 2026-12-04T19:00, store/history/partitions.py).

-- name: prepare
-- Step 1: a CHECK on at below the first partition's bound (the first of the month after
-- the newest line or now, a day's slack), NOT VALID: added under an instant's lock. The
-- bound is kept as the constraint's comment for the swap. Nothing to do once partitioned.
DO $$
DECLARE bound timestamptz;
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = 'audit_event'::regclass) = 'p'
     OR EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'audit_event'::regclass
                AND conname = 'audit_event_partition_bound') THEN
    RETURN;
  END IF;
  -- Every workspace's lines (row-level security, docs/workspaces.md), for this transaction.
  PERFORM set_config('taskflow.workspace', '*', true);
  bound := date_trunc('month', greatest(now(), (SELECT max(at) FROM audit_event))
                      + interval '1 day', 'UTC') + interval '1 month';
  EXECUTE format('ALTER TABLE audit_event ADD CONSTRAINT audit_event_partition_bound '
                 'CHECK (at < %L) NOT VALID', bound);
  EXECUTE format('COMMENT ON CONSTRAINT audit_event_partition_bound ON audit_event IS %L', bound);
END $$

-- name: validate
-- Step 2: the CHECK validated while writes go on (SHARE UPDATE EXCLUSIVE).
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'audit_event'::regclass
             AND conname = 'audit_event_partition_bound' AND NOT convalidated) THEN
    ALTER TABLE audit_event VALIDATE CONSTRAINT audit_event_partition_bound;
  END IF;
END $$

-- name: id_at_index
-- Step 3: the index the new primary key (id, at) needs, built without blocking writes.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS audit_event_id_at ON audit_event (id, at)

-- name: swap
-- Step 4, one short transaction under ACCESS EXCLUSIVE: the table becomes the first
-- partition of a parent made LIKE it; the parent gets its foreign keys, indexes,
-- triggers, row-level security and policies (read from the catalog, so columns and
-- policies other migrations added come along), and a DEFAULT partition.
DO $$
DECLARE
  bound timestamptz;
  r record;
  pkey text;
  idx text[] := '{}';
  trg text[] := '{}';
  fks text[] := '{}';
  pol text[] := '{}';
  s text;
  seq text;
  rls boolean;
  frls boolean;
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = 'audit_event'::regclass) = 'p' THEN
    RETURN;
  END IF;
  LOCK TABLE audit_event IN ACCESS EXCLUSIVE MODE;
  bound := obj_description((SELECT oid FROM pg_constraint WHERE conrelid = 'audit_event'::regclass
                            AND conname = 'audit_event_partition_bound'), 'pg_constraint')::timestamptz;
  SELECT relrowsecurity, relforcerowsecurity INTO rls, frls FROM pg_class
  WHERE oid = 'audit_event'::regclass;
  seq := pg_get_serial_sequence('audit_event', 'id');
  SELECT conname INTO pkey FROM pg_constraint
  WHERE conrelid = 'audit_event'::regclass AND contype = 'p';
  FOR r IN SELECT i.indexrelid, c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE i.indrelid = 'audit_event'::regclass AND NOT i.indisprimary
             AND c.relname <> 'audit_event_id_at' LOOP
    idx := idx || pg_get_indexdef(r.indexrelid);
    EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, left(r.relname, 55) || '_before');
  END LOOP;
  FOR r IN SELECT oid, tgname FROM pg_trigger
           WHERE tgrelid = 'audit_event'::regclass AND NOT tgisinternal LOOP
    trg := trg || pg_get_triggerdef(r.oid);
    EXECUTE format('DROP TRIGGER %I ON audit_event', r.tgname);
  END LOOP;
  FOR r IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
           WHERE conrelid = 'audit_event'::regclass AND contype = 'f' LOOP
    fks := fks || format('ALTER TABLE audit_event ADD CONSTRAINT %I %s', r.conname, r.def);
  END LOOP;
  FOR r IN SELECT * FROM pg_policies
           WHERE schemaname = current_schema() AND tablename = 'audit_event' LOOP
    pol := pol || format('CREATE POLICY %I ON audit_event AS %s FOR %s TO %s%s%s',
                         r.policyname, r.permissive, r.cmd,
                         (SELECT string_agg(quote_ident(x), ', ') FROM unnest(r.roles) x),
                         coalesce(' USING (' || r.qual || ')', ''),
                         coalesce(' WITH CHECK (' || r.with_check || ')', ''));
  END LOOP;
  EXECUTE format('ALTER TABLE audit_event DROP CONSTRAINT %I', pkey);
  ALTER TABLE audit_event ADD CONSTRAINT audit_event_id_at PRIMARY KEY USING INDEX audit_event_id_at;
  ALTER TABLE audit_event RENAME TO audit_event_before;
  CREATE TABLE audit_event (LIKE audit_event_before INCLUDING DEFAULTS INCLUDING IDENTITY
                            INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMMENTS)
    PARTITION BY RANGE (at);
  EXECUTE format('ALTER TABLE audit_event ADD CONSTRAINT %I PRIMARY KEY (id, at)', pkey);
  FOREACH s IN ARRAY fks LOOP EXECUTE s; END LOOP;
  FOREACH s IN ARRAY idx LOOP EXECUTE s; END LOOP;
  IF seq IS NOT NULL THEN
    EXECUTE format('ALTER SEQUENCE %s OWNED BY audit_event.id', seq);
  END IF;
  EXECUTE format('ALTER TABLE audit_event ATTACH PARTITION audit_event_before '
                 'FOR VALUES FROM (MINVALUE) TO (%L)', bound);
  ALTER TABLE audit_event_before DROP CONSTRAINT audit_event_partition_bound;
  CREATE TABLE audit_event_default PARTITION OF audit_event DEFAULT;
  FOREACH s IN ARRAY trg LOOP EXECUTE s; END LOOP;
  IF rls THEN ALTER TABLE audit_event ENABLE ROW LEVEL SECURITY; END IF;
  IF frls THEN ALTER TABLE audit_event FORCE ROW LEVEL SECURITY; END IF;
  FOREACH s IN ARRAY pol LOOP EXECUTE s; END LOOP;
END $$

-- name: month_partitions_function
-- month_partitions(parent, key, at, ahead): the month partitions of a table partitioned by
-- month on column `key` (the timeline on at, state spans on left_at): at's month and the
-- `ahead` after it, made where missing (the worker calls it); rows the DEFAULT partition took
-- for such a month move into it. A month a first partition covers is skipped (the overlap
-- is refused), as is one another worker made at the same moment. SELECT * moves whole rows:
-- the columns are the parent's, whatever migrations added. Returns how many it made.
CREATE FUNCTION month_partitions(parent text, key text, at timestamptz, ahead integer)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  made integer := 0;
  lo timestamptz;
  hi timestamptz;
  part text;
BEGIN
  FOR i IN 0..ahead LOOP
    lo := date_trunc('month', at, 'UTC') + make_interval(months => i);
    hi := lo + interval '1 month';
    part := parent || '_p' || to_char(lo AT TIME ZONE 'UTC', 'YYYY_MM');
    CONTINUE WHEN to_regclass(part) IS NOT NULL;
    BEGIN
      EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING IDENTITY '
                     'INCLUDING GENERATED INCLUDING STORAGE)', part, parent);
      EXECUTE format('WITH m AS (DELETE FROM %I WHERE %I >= %L AND %I < %L '
                     'RETURNING *) INSERT INTO %I SELECT * FROM m',
                     parent || '_default', key, lo, key, hi, part);
      EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                     parent, part, lo, hi);
      PERFORM partition_walls(parent::regclass, part::regclass);
      made := made + 1;
    EXCEPTION WHEN invalid_object_definition OR duplicate_table THEN
      NULL;  -- the first partition's months, or another worker made it just now
    END;
  END LOOP;
  RETURN made;
END $$

-- name: partitions_function
-- timeline_partitions(at, ahead): the timeline's month partitions (month_partitions).
CREATE FUNCTION timeline_partitions(at timestamptz, ahead integer) RETURNS integer
LANGUAGE sql AS $$ SELECT month_partitions('audit_event', 'at', at, ahead) $$

-- name: partition_walls_function
-- partition_walls(parent, part): a partition gets its parent's row-level security and
-- policies (the workspace wall, docs/workspaces.md). A query through the parent meets the
-- parent's policy; one naming the partition meets only the partition's own.
CREATE FUNCTION partition_walls(parent regclass, part regclass) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF (SELECT relrowsecurity FROM pg_class WHERE oid = parent) THEN
    EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', part);
  END IF;
  IF (SELECT relforcerowsecurity FROM pg_class WHERE oid = parent) THEN
    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', part);
  END IF;
  FOR r IN SELECT * FROM pg_policies p
           WHERE p.schemaname = current_schema()
             AND p.tablename = (SELECT relname FROM pg_class WHERE oid = parent)
             AND NOT EXISTS (SELECT 1 FROM pg_policy o
                             WHERE o.polrelid = part AND o.polname = p.policyname) LOOP
    EXECUTE format('CREATE POLICY %I ON %s AS %s FOR %s TO %s%s%s',
                   r.policyname, part, r.permissive, r.cmd,
                   (SELECT string_agg(quote_ident(x), ', ') FROM unnest(r.roles) x),
                   coalesce(' USING (' || r.qual || ')', ''),
                   coalesce(' WITH CHECK (' || r.with_check || ')', ''));
  END LOOP;
END $$

-- name: walls_function
-- timeline_partition_walls(part): a timeline partition walled as the timeline
-- (partition_walls; migration 2026-12-04T19:30 walled the partitions made before).
CREATE FUNCTION timeline_partition_walls(part regclass) RETURNS void
LANGUAGE sql AS $$ SELECT partition_walls('audit_event'::regclass, part) $$

-- name: months
-- The partitions of $2 (the timeline or state spans) but the DEFAULT one and the standing
-- spans', oldest first, with their bounds (from null: MINVALUE) whose upper bound is at or
-- before $1: the only ones whose rows can all belong to runs past their retention.
SELECT name, lower_at, upper_at FROM (
  SELECT c.relname AS name,
         substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(''([^'']+)''\)')::timestamptz
           AS lower_at,
         substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''([^'']+)''\)')::timestamptz
           AS upper_at
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
  WHERE i.inhparent = $2::regclass
) p
WHERE upper_at IS NOT NULL AND upper_at <= $1
ORDER BY upper_at

-- name: kept_row
-- One row of {parent} with {key} in [$1, $2) (the bounds prune the scan to one partition)
-- that retention would not take yet, given workflows $3 (text[]) and their cutoffs $4
-- (timestamptz[]): its run is live, ended after its workflow's cutoff, of a workflow
-- without an age, or has opened slots still waiting for their report measures. None: the
-- month goes whole. {parent} and {key} are filled from partitions.MONTHLY, never input.
SELECT 1 FROM {parent} a
JOIN run r ON r.id = a.run
LEFT JOIN unnest($3::text[], $4::timestamptz[]) AS k(workflow, cutoff) ON k.workflow = r.workflow
WHERE a.{key} >= $1 AND a.{key} < $2
  AND (k.cutoff IS NULL OR r.ended_at IS NULL OR r.ended_at >= k.cutoff
       OR r.status NOT IN ('completed', 'cancelled')
       OR EXISTS (SELECT 1 FROM slot s WHERE s.run = r.id AND s.opened_at IS NOT NULL
                  AND s.measured_clock IS NULL))
LIMIT 1

-- name: span_prepare
-- State spans partitioned by month of left_at (migration 2026-12-05T02:00), step 1: a CHECK
-- that every closed span ended before the first partition's bound (the first of the month
-- after the newest end or now, a day's slack), NOT VALID: added under an instant's lock;
-- the bound is kept as the constraint's comment for the swap. Nothing to do once partitioned.
DO $$
DECLARE bound timestamptz;
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = 'state_span'::regclass) = 'p'
     OR EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'state_span'::regclass
                AND conname = 'state_span_partition_bound') THEN
    RETURN;
  END IF;
  PERFORM set_config('taskflow.workspace', '*', true);
  bound := date_trunc('month', greatest(now(), (SELECT max(left_at) FROM state_span
                                                 WHERE left_at < 'infinity'))
                      + interval '1 day', 'UTC') + interval '1 month';
  EXECUTE format('ALTER TABLE state_span ADD CONSTRAINT state_span_partition_bound '
                 'CHECK (left_at < %L OR left_at = %L) NOT VALID', bound, 'infinity');
  EXECUTE format('COMMENT ON CONSTRAINT state_span_partition_bound ON state_span IS %L', bound);
END $$

-- name: span_validate
-- Step 2: the CHECK validated while writes go on (SHARE UPDATE EXCLUSIVE).
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'state_span'::regclass
             AND conname = 'state_span_partition_bound' AND NOT convalidated) THEN
    ALTER TABLE state_span VALIDATE CONSTRAINT state_span_partition_bound;
  END IF;
END $$

-- name: span_key_index
-- Step 3: the index the new primary key (id, left_at) needs, built without blocking writes.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS state_span_id_left ON state_span (id, left_at)

-- name: span_standing_index
-- Step 4: the standing spans (one per live run, and the undone ones that stood), found by
-- the swap without a scan.
CREATE INDEX CONCURRENTLY IF NOT EXISTS state_span_standing_before ON state_span (id)
WHERE left_at = 'infinity'

-- name: span_swap
-- Step 5, one transaction under ACCESS EXCLUSIVE on state_span: the table becomes the first
-- partition (state_span_before) of a parent made LIKE it, with its foreign keys, indexes
-- (the one-standing-span rule now on (run, left_at): a partitioned table's unique index holds
-- its key), triggers, row-level security and policies read from the catalog; the standing
-- spans move to their own partition (state_span_standing: left_at 'infinity'), the only
-- rows copied; attaching the old table reads it once to check its bound (no CHECK can
-- prove it while standing spans were in it); and a DEFAULT partition.
-- Attaching moves the table's foreign keys under the parent's, which takes ACCESS EXCLUSIVE
-- on the tables they reference (run, workspace): those are locked first, in the order
-- writers take them (a run, then its lines' spans), so a writer already holding a run ends
-- before the spans are locked. A deadlock all the same (a writer that took them the other
-- way) rolls the attempt back to its savepoint and tries again.
DO $$
DECLARE
  bound timestamptz;
  r record;
  pkey text;
  idx text[] := '{}';
  trg text[] := '{}';
  fks text[] := '{}';
  pol text[] := '{}';
  s text;
  seq text;
  rls boolean;
  frls boolean;
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = 'state_span'::regclass) = 'p' THEN
    RETURN;
  END IF;
  LOOP
  BEGIN
  idx := '{}'; trg := '{}'; fks := '{}'; pol := '{}';
  LOCK TABLE run IN ACCESS EXCLUSIVE MODE;
  LOCK TABLE workspace IN ACCESS EXCLUSIVE MODE;
  LOCK TABLE state_span IN ACCESS EXCLUSIVE MODE;
  PERFORM set_config('taskflow.workspace', '*', true);  -- every workspace's spans move
  bound := obj_description((SELECT oid FROM pg_constraint WHERE conrelid = 'state_span'::regclass
                            AND conname = 'state_span_partition_bound'), 'pg_constraint')::timestamptz;
  SELECT relrowsecurity, relforcerowsecurity INTO rls, frls FROM pg_class
  WHERE oid = 'state_span'::regclass;
  seq := pg_get_serial_sequence('state_span', 'id');
  SELECT conname INTO pkey FROM pg_constraint
  WHERE conrelid = 'state_span'::regclass AND contype = 'p';
  FOR r IN SELECT i.indexrelid, c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE i.indrelid = 'state_span'::regclass AND NOT i.indisprimary
             AND c.relname NOT IN ('state_span_id_left', 'state_span_standing_before') LOOP
    IF r.relname = 'state_span_open' THEN
      EXECUTE 'DROP INDEX state_span_open';  -- only standing spans: they leave the table
    ELSE
      idx := idx || pg_get_indexdef(r.indexrelid);
      EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, left(r.relname, 55) || '_before');
    END IF;
  END LOOP;
  FOR r IN SELECT oid, tgname FROM pg_trigger
           WHERE tgrelid = 'state_span'::regclass AND NOT tgisinternal LOOP
    trg := trg || pg_get_triggerdef(r.oid);
    EXECUTE format('DROP TRIGGER %I ON state_span', r.tgname);
  END LOOP;
  FOR r IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
           WHERE conrelid = 'state_span'::regclass AND contype = 'f' LOOP
    fks := fks || format('ALTER TABLE state_span ADD CONSTRAINT %I %s', r.conname, r.def);
  END LOOP;
  FOR r IN SELECT * FROM pg_policies
           WHERE schemaname = current_schema() AND tablename = 'state_span' LOOP
    pol := pol || format('CREATE POLICY %I ON state_span AS %s FOR %s TO %s%s%s',
                         r.policyname, r.permissive, r.cmd,
                         (SELECT string_agg(quote_ident(x), ', ') FROM unnest(r.roles) x),
                         coalesce(' USING (' || r.qual || ')', ''),
                         coalesce(' WITH CHECK (' || r.with_check || ')', ''));
  END LOOP;
  EXECUTE format('ALTER TABLE state_span DROP CONSTRAINT %I', pkey);
  ALTER TABLE state_span ADD CONSTRAINT state_span_id_left PRIMARY KEY USING INDEX state_span_id_left;
  ALTER TABLE state_span RENAME TO state_span_before;
  CREATE TABLE state_span (LIKE state_span_before INCLUDING DEFAULTS INCLUDING IDENTITY
                           INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMMENTS)
    PARTITION BY RANGE (left_at);
  EXECUTE format('ALTER TABLE state_span ADD CONSTRAINT %I PRIMARY KEY (id, left_at)', pkey);
  FOREACH s IN ARRAY fks LOOP EXECUTE s; END LOOP;
  FOREACH s IN ARRAY idx LOOP EXECUTE s; END LOOP;
  CREATE UNIQUE INDEX state_span_open ON state_span (run, left_at)
    WHERE left_at = 'infinity' AND undone_by IS NULL;
  IF seq IS NOT NULL THEN
    EXECUTE format('ALTER SEQUENCE %s OWNED BY state_span.id', seq);
  END IF;
  -- Filled first, then attached: its indexes are built once over its rows, not kept up
  -- row by row (half the swap's time with 100 000 live runs, bench/partition.py).
  CREATE TABLE state_span_standing (LIKE state_span INCLUDING DEFAULTS INCLUDING IDENTITY
                                    INCLUDING GENERATED INCLUDING STORAGE);
  WITH m AS (DELETE FROM state_span_before WHERE left_at = 'infinity' RETURNING *)
  INSERT INTO state_span_standing SELECT * FROM m;
  ALTER TABLE state_span ATTACH PARTITION state_span_standing
    FOR VALUES FROM ('infinity') TO (MAXVALUE);
  DROP INDEX state_span_standing_before;
  EXECUTE format('ALTER TABLE state_span ATTACH PARTITION state_span_before '
                 'FOR VALUES FROM (MINVALUE) TO (%L)', bound);
  ALTER TABLE state_span_before DROP CONSTRAINT state_span_partition_bound;
  CREATE TABLE state_span_default PARTITION OF state_span DEFAULT;
  FOREACH s IN ARRAY trg LOOP EXECUTE s; END LOOP;
  IF rls THEN ALTER TABLE state_span ENABLE ROW LEVEL SECURITY; END IF;
  IF frls THEN ALTER TABLE state_span FORCE ROW LEVEL SECURITY; END IF;
  FOREACH s IN ARRAY pol LOOP EXECUTE s; END LOOP;
  PERFORM partition_walls('state_span'::regclass, 'state_span_standing'::regclass);
  PERFORM partition_walls('state_span'::regclass, 'state_span_default'::regclass);
  EXIT;
  EXCEPTION WHEN deadlock_detected THEN
    PERFORM pg_sleep(0.1 + random() / 10);  -- every lock of the attempt is released
  END;
  END LOOP;
END $$
