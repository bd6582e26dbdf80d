"""Workspace admin verbs (docs/workspaces.md): create, list, suspend, resume, export.

Each acts across workspaces (the workspace table is no workspace's; an export reads the
rows of the one it names), so it runs in every workspace whoever calls it.
"""

from __future__ import annotations

from typing import Any

from taskflow import errors
from taskflow.service.common.container import Services
from taskflow.store.common import db
from taskflow.store.workspaces import scope
from taskflow.store.workspaces import workspaces as rows
from taskflow.store.workspaces.workspaces import Workspace

STATUSES = ("active", "suspended")


async def create(
    services: Services,
    name: str,
    *,
    max_runs: int | None = None,
    max_open_slots: int | None = None,
    requests_per_minute: int | None = None,
) -> Workspace:
    name = name.strip()
    if not 1 <= len(name) <= 100:
        raise errors.ValidationError("A workspace's name is 1 to 100 characters.", field="name")
    limits = (max_runs, max_open_slots, requests_per_minute)
    if any(v is not None and v < 0 for v in limits):
        raise errors.ValidationError("Limits are 0 or more (none: no limit).", field="limits")
    with scope.every():
        async with services.db.transaction() as conn:
            made = await rows.create(conn, name, limits, services.clock.now())
    if made is None:
        raise errors.ValidationError(f"A workspace is named {name!r} already.", field="name")
    return made


async def every(services: Services) -> list[Workspace]:
    with scope.every():
        async with services.db.transaction() as conn:
            return await rows.every(conn)


async def set_status(services: Services, workspace: str, status: str) -> Workspace:
    """Suspend (its tokens refused) or resume a workspace."""
    assert status in STATUSES
    found = None
    if db.uuid_or_none(workspace) is not None:
        with scope.every():
            async with services.db.transaction() as conn:
                found = await rows.set_status(conn, workspace, status, services.clock.now())
    if found is None:
        raise errors.NotFound(f"No workspace has the id {workspace!r}.")
    return found


async def export(services: Services, workspace: str) -> dict[str, Any]:
    """Everything ``workspace`` holds, as JSON: its row and, by table, its rows."""
    known = {w.id: w for w in await every(services)}
    if workspace not in known:
        raise errors.NotFound(f"No workspace has the id {workspace!r}.")
    with scope.every():
        async with services.db.transaction() as conn:
            held = await rows.export(conn, workspace)
    w = known[workspace]
    head = {"id": w.id, "name": w.name, "status": w.status, "createdAt": w.created_at.isoformat()}
    return {"workspace": head, "tables": held}
