"""Scoped powers on principals: lead, manager and integration grants per workflow and team.

``powers`` is a JSON list of grants, e.g. ``[{"power": "lead", "workflows":
["expense-approval"], "teams": ["role:finance"]}]`` (see docs/access.md). A role
named lead, manager or integration no longer grants anything by itself, so the
principals that held one are given the grant that role used to mean (every
workflow), keeping existing deployments working until an admin narrows them.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T19:01:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "scoped powers on principals"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def add() -> None:
        await _Raw.raw("ALTER TABLE principal ADD COLUMN powers jsonb NOT NULL DEFAULT '[]'")
        await _Raw.raw(
            "UPDATE principal SET powers = (SELECT coalesce(jsonb_agg(jsonb_build_object("
            "'power', r)), '[]') FROM unnest(roles) r WHERE r IN ('lead', 'manager', "
            "'integration'))"
        )

    async def drop() -> None:
        await _Raw.raw("ALTER TABLE principal DROP COLUMN IF EXISTS powers")

    manager.add_raw(add)
    manager.add_raw_backwards(drop)
    return manager
