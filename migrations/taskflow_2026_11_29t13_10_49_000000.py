"""Report indexes and the business-time SQL functions (tables.EXTRA_INDEXES, EXTRA_FUNCTIONS)."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-11-29T13:10:49:000000"
VERSION = "1.38.0"
DESCRIPTION = "report indexes and business_us"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw('CREATE UNIQUE INDEX calendar_interval_lookup ON calendar_interval (calendar, starts_at) INCLUDE (ends_at, cum_us)')
        await _Raw.raw("CREATE INDEX audit_event_slot_pickup ON audit_event (slot, at) WHERE kind IN ('slot.claimed', 'slot.assigned')")
        await _Raw.raw('CREATE INDEX slot_opened_at ON slot (opened_at)')
        await _Raw.raw('CREATE FUNCTION business_cum_us(cal text, t timestamptz) RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT i.cum_us + (extract(epoch FROM (least(t, i.ends_at) - i.starts_at)) * 1000000)::bigint FROM calendar_interval i WHERE i.calendar = cal AND i.starts_at <= t ORDER BY i.starts_at DESC LIMIT 1 $$')
        await _Raw.raw('CREATE FUNCTION business_us(cal text, t0 timestamptz, t1 timestamptz) RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT CASE WHEN t0 IS NULL OR t1 IS NULL THEN NULL WHEN t1 <= t0 THEN 0::bigint WHEN cal IS NULL THEN (extract(epoch FROM (t1 - t0)) * 1000000)::bigint ELSE business_cum_us(cal, t1) - business_cum_us(cal, t0) END $$')

    async def drop() -> None:
        await _Raw.raw("DROP FUNCTION IF EXISTS business_us(text, timestamptz, timestamptz)")
        await _Raw.raw("DROP FUNCTION IF EXISTS business_cum_us(text, timestamptz)")
        await _Raw.raw("DROP INDEX IF EXISTS calendar_interval_lookup")
        await _Raw.raw("DROP INDEX IF EXISTS audit_event_slot_pickup")
        await _Raw.raw("DROP INDEX IF EXISTS slot_opened_at")

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
