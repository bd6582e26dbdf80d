"""Backfill what live slots now carry for the SLA report: held facts and the report's clock.

From this version every move keeps ``picked_at``, ``held_us`` and
``held_since`` on the slot, and the SLA report reads a live slot's first
pickup and held time from there instead of its timeline. Slots that are live
or not yet measured (those a report measures on read: the partial index
``slot_unmeasured_opened_at``) get them here from their timeline, with the
timeline's own reading: each claim or assignment holds the slot until the
next move; the first is the pickup; a hold with no move after it is open.
The time to pickup of live slots (business time, which needs the calendars)
is stored by ``taskflow measure-slots``; until then the report measures it.

The same slots get a copy of the clock the report reads (finished, else
assigned) from ``sla_clock``, which every clock write keeps from now on.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T06:23:33:000000"
VERSION = "1.38.0"
DESCRIPTION = "backfill live slots' held facts and report clock"

HELD_FACTS = """
UPDATE slot s SET picked_at = e.picked_at, held_us = e.held_us, held_since = e.held_since
FROM (
    SELECT m.slot,
           min(m.at) FILTER (WHERE m.held) AS picked_at,
           coalesce(sum((extract(epoch FROM m.next - m.at) * 1000000)::bigint)
                        FILTER (WHERE m.held AND m.at < m.next), 0) AS held_us,
           max(m.at) FILTER (WHERE m.held AND m.next IS NULL) AS held_since
    FROM (
        SELECT a.slot, a.at, a.kind IN ('slot.claimed', 'slot.assigned') AS held,
               lead(a.at) OVER (PARTITION BY a.slot ORDER BY a.at, a.id) AS next
        FROM slot t
        JOIN audit_event a ON a.run = t.run AND a.slot = t.id
        WHERE (t.measured_clock IS NULL OR t.status NOT IN ('satisfied', 'cancelled'))
          AND a.kind IN ('slot.claimed', 'slot.assigned', 'slot.released', 'slot.satisfied',
                         'slot.cancelled')
    ) m
    GROUP BY m.slot
) e
WHERE s.id = e.slot
"""

REPORT_CLOCK = """
UPDATE slot s SET sla_milestone = k.milestone, sla_calendar = k.calendar,
                  sla_budget_us = k.budget_us, sla_working_days = k.working_days,
                  sla_pauses = k.pauses, sla_met_at = k.met_at, sla_due_at = k.due_at,
                  sla_breached_at = k.breached_at
FROM (
    SELECT DISTINCT ON (c.slot) c.*
    FROM sla_clock c JOIN slot t ON t.id = c.slot
    WHERE t.measured_clock IS NULL OR t.status NOT IN ('satisfied', 'cancelled')
    ORDER BY c.slot, c.milestone DESC
) k
WHERE s.id = k.slot
"""
BACKFILL = (HELD_FACTS, REPORT_CLOCK)


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def backfill() -> None:
        for sql in BACKFILL:
            await _Raw.raw(sql)

    async def nothing() -> None:
        pass  # the columns go with the previous migration's backwards step

    manager.add_raw(backfill)
    manager.add_raw_backwards(nothing)
    return manager
