"""Residual candidate rules in SQL: ``rule_holds`` and ``residual_admits``.

``taskflow/store/slots/candidacy.py`` holds the statements (also in
``schema_extras.EXTRA_FUNCTIONS``) and the one predicate the inbox,
claim-next, the team queue and the board use.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T19:02:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "residual candidate rules in SQL"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw("CREATE FUNCTION rule_holds(rule jsonb, keys text[]) RETURNS boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$ DECLARE parts jsonb; part jsonb; r boolean; undecided boolean := false; BEGIN IF rule ? 'key' THEN RETURN (rule->>'key') = ANY(keys); END IF; IF rule ? 'unknown' THEN RETURN NULL; END IF; IF rule ? 'not' THEN RETURN NOT rule_holds(rule->'not', keys); END IF; parts := coalesce(rule->'all', rule->'any'); FOR i IN 0 .. jsonb_array_length(parts) - 1 LOOP part := parts->i; IF part ? 'key' THEN r := (part->>'key') = ANY(keys); ELSE r := rule_holds(part, keys); END IF; IF r IS NULL THEN undecided := true; ELSIF r <> (rule ? 'all') THEN RETURN r; END IF; END LOOP; RETURN CASE WHEN undecided THEN NULL ELSE rule ? 'all' END; END $$")
        await _Raw.raw("CREATE FUNCTION residual_admits(rules jsonb, keys text[]) RETURNS boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE COST 200 AS $$ DECLARE part jsonb; BEGIN FOR i IN 0 .. jsonb_array_length(rules) - 1 LOOP part := rules->i; IF part ? 'key' THEN IF NOT (part->>'key') = ANY(keys) THEN RETURN false; END IF; ELSIF rule_holds(part, keys) IS NOT TRUE THEN RETURN false; END IF; END LOOP; RETURN true; END $$")

    async def drop() -> None:
        await _Raw.raw("DROP FUNCTION IF EXISTS residual_admits(jsonb, text[])")
        await _Raw.raw("DROP FUNCTION IF EXISTS rule_holds(jsonb, text[])")

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
