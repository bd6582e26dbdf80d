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

-- name: partitions_function
-- timeline_partitions(at, ahead): the month partitions of at's month and the `ahead`
-- after it, made where missing (the worker calls it); lines the DEFAULT partition took
-- for such a month move into it. A month the first partition covers is skipped (the
-- overlap is refused), as is one another worker made at the same moment. SELECT * moves whole rows: the columns are the parent's, whatever
-- migrations added. Returns how many partitions it made.
CREATE FUNCTION timeline_partitions(at timestamptz, ahead integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  made integer := 0;
  lo timestamptz;
  hi timestamptz;
  part text;
BEGIN
  FOR i IN 0..ahead LOOP
    lo := date_trunc('month', at, 'UTC') + make_interval(months => i);
    hi := lo + interval '1 month';
    part := 'audit_event_p' || to_char(lo AT TIME ZONE 'UTC', 'YYYY_MM');
    CONTINUE WHEN to_regclass(part) IS NOT NULL;
    BEGIN
      EXECUTE format('CREATE TABLE %I (LIKE audit_event INCLUDING DEFAULTS INCLUDING IDENTITY '
                     'INCLUDING GENERATED INCLUDING STORAGE)', part);
      EXECUTE format('WITH m AS (DELETE FROM audit_event_default WHERE at >= %L AND at < %L '
                     'RETURNING *) INSERT INTO %I SELECT * FROM m', lo, hi, part);
      EXECUTE format('ALTER TABLE audit_event ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                     part, lo, hi);
      PERFORM timeline_partition_walls(part::regclass);
      made := made + 1;
    EXCEPTION WHEN invalid_object_definition OR duplicate_table THEN
      NULL;  -- the first partition's months, or another worker made it just now
    END;
  END LOOP;
  RETURN made;
END $$

-- name: walls_function
-- timeline_partition_walls(part): a partition gets the timeline's row-level security and
-- policies (the workspace wall, docs/workspaces.md). A query through audit_event meets the
-- parent's policy; one naming the partition meets only the partition's own (migration
-- 2026-12-04T19:30 walled the partitions made before; timeline_partitions() walls each new one).
CREATE FUNCTION timeline_partition_walls(part regclass) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF (SELECT relrowsecurity FROM pg_class WHERE oid = 'audit_event'::regclass) THEN
    EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', part);
  END IF;
  IF (SELECT relforcerowsecurity FROM pg_class WHERE oid = 'audit_event'::regclass) THEN
    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', part);
  END IF;
  FOR r IN SELECT * FROM pg_policies p
           WHERE p.schemaname = current_schema() AND p.tablename = 'audit_event'
             AND NOT EXISTS (SELECT 1 FROM pg_policy o
                             WHERE o.polrelid = part AND o.polname = p.policyname) LOOP
    EXECUTE format('CREATE POLICY %I ON %s AS %s FOR %s TO %s%s%s',
                   r.policyname, part, r.permissive, r.cmd,
                   (SELECT string_agg(quote_ident(x), ', ') FROM unnest(r.roles) x),
                   coalesce(' USING (' || r.qual || ')', ''),
                   coalesce(' WITH CHECK (' || r.with_check || ')', ''));
  END LOOP;
END $$

-- name: months
-- The timeline's partitions but the DEFAULT one, oldest first, with their bounds (from
-- null: MINVALUE) whose upper bound is at or before $1: the only ones whose lines can all
-- belong to runs past their retention.
SELECT name, lower_at, upper_at FROM (
  SELECT c.relname AS name,
         substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(''([^'']+)''\)')::timestamptz
           AS lower_at,
         substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''([^'']+)''\)')::timestamptz
           AS upper_at
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
  WHERE i.inhparent = 'audit_event'::regclass
) p
WHERE upper_at IS NOT NULL AND upper_at <= $1
ORDER BY upper_at

-- name: kept_line
-- One line in [$1, $2) (the bounds prune the scan to one partition) that retention would
-- not take yet, given workflows $3 (text[]) and their cutoffs $4 (timestamptz[]): its run
-- is live, ended after its workflow's cutoff, of a workflow without an age, or has
-- opened slots still waiting for their report measures. None: the month goes whole.
SELECT 1 FROM audit_event a
JOIN run r ON r.id = a.run
LEFT JOIN unnest($3::text[], $4::timestamptz[]) AS k(workflow, cutoff) ON k.workflow = r.workflow
WHERE a.at >= $1 AND a.at < $2
  AND (k.cutoff IS NULL OR r.ended_at IS NULL OR r.ended_at >= k.cutoff
       OR r.status NOT IN ('completed', 'cancelled')
       OR EXISTS (SELECT 1 FROM slot s WHERE s.run = r.id AND s.opened_at IS NOT NULL
                  AND s.measured_clock IS NULL))
LIMIT 1
