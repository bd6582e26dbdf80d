"""Backfill the slots' held facts from their timelines (core/runs/holding.py says what they are).

From this version every move keeps ``picked_at``, ``held_us`` and
``held_since`` on the slot, and the SLA report reads a live slot's first
pickup and held time from there instead of its timeline. Slots that are live
or not yet measured (those a report measures on read: the partial index
``slot_unmeasured_opened_at``) get them here from their timeline, with the
timeline's own reading: each claim or assignment holds the slot until the
next move; the first is the pickup; a hold with no move after it is open.
The time to pickup of live slots (business time, which needs the calendars)
is stored by ``taskflow measure-slots``; until then the report measures it.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T06:08:31:000000"
VERSION = "1.38.0"
DESCRIPTION = "backfill slot held facts from the timeline"

BACKFILL = """
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


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def backfill() -> None:
        await _Raw.raw(BACKFILL)

    async def nothing() -> None:
        pass  # the columns go with the previous migration's backwards step

    manager.add_raw(backfill)
    manager.add_raw_backwards(nothing)
    return manager
