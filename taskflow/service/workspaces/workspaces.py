"""Workspace admin verbs (docs/workspaces.md): create, list, suspend, resume, export.

One set of use cases for the CLI and GraphQL. ``by`` is who asks: None is the operator at
the CLI (on the host, with the database's credentials); a principal must be an admin of the
default workspace (``require_workspace_admin``): anyone else is refused, so the ids of other
workspaces never reach a tenant. Each acts across workspaces (the workspace table is no
workspace's; an export reads the rows of the one it names), so it runs in every workspace.
"""

from __future__ import annotations

from typing import Any

from taskflow import errors
from taskflow.core.access import access
from taskflow.core.access.principals import Principal
from taskflow.core.workspaces import refusals
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.store.common import db
from taskflow.store.workspaces import schema, scope
from taskflow.store.workspaces import workspaces as rows
from taskflow.store.workspaces.workspaces import Workspace as Workspace

STATUSES = ("active", "suspended")
#: The limits a workspace may have, as (runs, open slots, requests per minute); None: none.
Limits = tuple[int | None, int | None, int | None]
#: The longest limit accepted (a column of type integer).
MAX_LIMIT = 2_000_000_000


def require_workspace_admin(by: Principal | None, action: str) -> None:
    """Only the default workspace's admins (and the CLI's operator, ``by`` None) manage
    workspaces: a tenant's admin is refused as anyone else, and learns no workspace's id."""
    if by is None:
        return
    if not access.is_deployment_admin(by):
        raise errors.Forbidden(
            f"Only admins of the default workspace may {action}; you may not "
            '(docs/workspaces.md, "Admin verbs").'
        )


def _checked_limits(limits: Limits) -> Limits:
    if any(v is not None and not 0 <= v <= MAX_LIMIT for v in limits):
        raise errors.ValidationError(
            f"Limits are 0 to {MAX_LIMIT} (none: no limit).", field="limits"
        )
    return limits


@retry.retried("create a workspace")
async def create(
    services: Services,
    name: str,
    *,
    by: Principal | None = None,
    max_runs: int | None = None,
    max_open_slots: int | None = None,
    requests_per_minute: int | None = None,
) -> Workspace:
    require_workspace_admin(by, "create workspaces")
    name = name.strip()
    if not 1 <= len(name) <= 100:
        raise errors.ValidationError("A workspace's name is 1 to 100 characters.", field="name")
    limits = _checked_limits((max_runs, max_open_slots, requests_per_minute))
    with scope.every():
        async with services.db.transaction() as conn:
            made = await rows.create(conn, name, limits, services.clock.now())
    if made is None:
        raise errors.ValidationError(f"A workspace is named {name!r} already.", field="name")
    return made


async def every(services: Services, *, by: Principal | None = None) -> list[Workspace]:
    require_workspace_admin(by, "list workspaces")
    with scope.every():
        async with services.db.transaction() as conn:
            return await rows.every(conn)


async def get(services: Services, workspace: str) -> Workspace | None:
    """One workspace's row (any caller's own: the ``workspace`` field of what it holds)."""
    if db.uuid_or_none(workspace) is None:
        return None
    with scope.every():
        async with services.db.connection() as conn:
            return await rows.get(conn, workspace)


def not_found(workspace: str) -> errors.NotFound:
    return errors.NotFound(f"No workspace has the id {workspace!r}.")


@retry.retried("suspend or resume a workspace")
async def set_status(
    services: Services, workspace: str, status: str, *, by: Principal | None = None
) -> Workspace:
    """Suspend (its tokens refused, its timers and steps wait) or resume a workspace;
    ``WorkspaceUnchanged`` when it is in that status already."""
    assert status in STATUSES
    require_workspace_admin(by, "suspend or resume workspaces")
    if db.uuid_or_none(workspace) is None:
        raise not_found(workspace)
    if workspace == schema.DEFAULT and status == "suspended":
        # Its admins are the only principals who may resume a workspace.
        raise errors.ValidationError(
            "The default workspace cannot be suspended: its admins manage every workspace.",
            field="workspaceId",
        )
    with scope.every():
        async with services.db.transaction() as conn:
            before = await rows.get(conn, workspace, lock=True)
            if before is None:
                raise not_found(workspace)
            if before.status == status:
                raise refusals.WorkspaceUnchanged(
                    f"The workspace {before.name!r} is {status} already; nothing changed.",
                    status=status,
                )
            found = await rows.set_status(conn, workspace, status, services.clock.now())
    assert found is not None
    return found


@retry.retried("set a workspace's limits")
async def set_limits(
    services: Services, workspace: str, limits: Limits, *, by: Principal | None = None
) -> Workspace:
    """A workspace's limits from now on (None: none); what is over them stays, new runs,
    slots and requests are refused until the figures are under them again."""
    require_workspace_admin(by, "set workspace limits")
    _checked_limits(limits)
    found = None
    if db.uuid_or_none(workspace) is not None:
        with scope.every():
            async with services.db.transaction() as conn:
                found = await rows.set_limits(conn, workspace, limits, services.clock.now())
    if found is None:
        raise not_found(workspace)
    return found


async def exportable(
    services: Services, workspace: str, *, by: Principal | None = None
) -> Workspace:
    """The workspace ``by`` may export (NotFound, Forbidden otherwise)."""
    require_workspace_admin(by, "export workspaces")
    w = await get(services, workspace)
    if w is None:
        raise not_found(workspace)
    return w


@retry.retried("export a workspace")
async def export(
    services: Services, workspace: str, *, by: Principal | None = None
) -> dict[str, Any]:
    """Everything ``workspace`` holds, as JSON: its row and, by table, its rows."""
    w = await exportable(services, workspace, by=by)
    with scope.every():
        async with services.db.transaction() as conn:
            held = await rows.export(conn, workspace)
    head = {"id": w.id, "name": w.name, "status": w.status, "createdAt": w.created_at.isoformat()}
    return {"workspace": head, "tables": held}
