"""The ``Workspace`` type, and the ``workspace`` field of every object a workspace holds
(docs/workspaces.md).

A workspace's objects are shown only to its own principals (row-level security and the
store's statements keep every other workspace's out of reach), so the workspace of any
Subject, Run, Slot, WebhookEndpoint or Automation an answer shows is its caller's: the field
reads the caller's workspace row once per request. A Principal's is read from its own row.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.dataloader import DataLoader

from taskflow import errors
from taskflow.api.graphql.common.context import Info, caller
from taskflow.service.workspaces import workspaces


@strawberry.type(
    name="Workspace",
    description="A tenant: a team or customer whose principals, subjects, runs, slots, "
    "webhook endpoints and automations are its own, unseen by any other (docs/workspaces.md). "
    "Workflow definitions and calendars are global: deployed files, the same for every "
    "workspace.",
)
class WorkspaceType:
    id: strawberry.ID = strawberry.field(
        description="Its id (a UUID, as `taskflow workspaces list` prints it)."
    )
    name: str = strawberry.field(description="Its name, unique across workspaces.")


@strawberry.type(name="WorkspaceLimits", description="A workspace's limits; null: none.")
class WorkspaceLimits:
    runs: int | None = strawberry.field(description="Live (active or scheduled) runs at most.")
    open_slots: int | None = strawberry.field(description="Open slots at most.")
    requests_per_minute: int | None = strawberry.field(
        description="Authenticated API requests per minute at most, counted across every server "
        "process."
    )


@strawberry.type(
    name="WorkspaceDetail",
    description="A workspace as its administrators (the default workspace's admins) see it.",
)
class WorkspaceDetail(WorkspaceType):
    status: str = strawberry.field(
        description="active, or suspended (its tokens refused, its timers and steps wait)."
    )
    limits: WorkspaceLimits = strawberry.field(description="Its limits.")
    created_at: datetime = strawberry.field(description="When it was created.")

    @classmethod
    def of(cls, row: workspaces.Workspace) -> WorkspaceDetail:
        limits = WorkspaceLimits(
            runs=row.max_runs,
            open_slots=row.max_open_slots,
            requests_per_minute=row.requests_per_minute,
        )
        return cls(
            id=strawberry.ID(row.id),
            name=row.name,
            status=row.status,
            limits=limits,
            created_at=row.created_at,
        )


async def workspace(info: Info, workspace_id: str | None = None) -> WorkspaceType:
    """Workspace ``workspace_id`` (default: the caller's), read once per request."""
    loaders = info.context.loaders
    if "workspace" not in loaders:
        services = info.context.services

        async def load(ids: list[str]) -> list[Any]:
            return [await workspaces.get(services, i) for i in ids]

        loaders["workspace"] = DataLoader(load_fn=load)
    wanted = workspace_id or (await caller(info)).workspace
    row = await loaders["workspace"].load(wanted)
    if row is None:
        raise errors.NotFound("The workspace is gone.")
    return WorkspaceType(id=strawberry.ID(row.id), name=row.name)


WORKSPACE_DESCRIPTION = (
    "The workspace (tenant) holding it: always the caller's, since nothing of another "
    "workspace is shown (docs/workspaces.md)."
)


@strawberry.type
class Held:
    """Base of the types of objects a workspace holds: their ``workspace`` field."""

    @strawberry.field(description=WORKSPACE_DESCRIPTION)
    async def workspace(self, info: Info) -> WorkspaceType:
        return await workspace(info)
