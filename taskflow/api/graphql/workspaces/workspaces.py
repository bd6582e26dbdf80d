"""Workspace admin verbs in GraphQL (docs/workspaces.md): ``workspaces`` (a connection),
``createWorkspace``, ``suspendWorkspace``, ``resumeWorkspace``, ``setWorkspaceLimits``,
``exportWorkspace``.

Each runs the CLI's own use case (``service/workspaces/workspaces.py``) with the caller as
``by``: only the default workspace's admins may; anyone else gets ``NotAllowed``, so no
tenant learns another workspace's id (not even whether an id exists).
"""

from __future__ import annotations

from typing import Annotated, cast

import strawberry
from strawberry.scalars import JSON

from taskflow.api.graphql.common import keyed, listing, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.common.workspace_type import WorkspaceDetail
from taskflow.core.access.principals import Principal
from taskflow.service.workspaces import workspaces


@strawberry.input(description="Limits of a workspace; a limit left out (null) is none.")
class WorkspaceLimitsInput:
    runs: int | None = strawberry.field(default=None, description="Live runs at most.")
    open_slots: int | None = strawberry.field(default=None, description="Open slots at most.")
    requests_per_minute: int | None = strawberry.field(
        default=None, description="Authenticated API requests per minute at most."
    )

    def as_tuple(self) -> workspaces.Limits:
        return (self.runs, self.open_slots, self.requests_per_minute)


@strawberry.input(description="A new workspace.")
class CreateWorkspaceInput:
    name: str = strawberry.field(description="Its name: 1 to 100 characters, unique.")
    limits: WorkspaceLimitsInput | None = strawberry.field(
        default=None, description="Its limits (default: none)."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="One workspace, by its id.")
class WorkspaceInput:
    workspace_id: strawberry.ID = strawberry.field(description="The workspace's id.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="A workspace's limits from now on.")
class SetWorkspaceLimitsInput(WorkspaceInput):
    limits: WorkspaceLimitsInput = strawberry.field(
        description="Every limit it has from now on (a limit left out: none)."
    )


@strawberry.input(description="Narrows the workspaces listed.")
class WorkspaceFilter:
    status: str | None = strawberry.field(
        default=None, description="Only workspaces in this status (active, suspended)."
    )


@strawberry.type(description="The workspace as it stands after the change.")
class WorkspaceSuccess:
    workspace: WorkspaceDetail = strawberry.field(description="The workspace.")


@strawberry.type(
    description="Everything a workspace holds, as JSON (as `taskflow workspaces export` prints it)."
)
class WorkspaceExport:
    workspace: WorkspaceDetail = strawberry.field(description="The workspace.")
    export: JSON = strawberry.field(
        description="{workspace: {id, name, status, createdAt}, tables: {<table>: [rows]}}: "
        "every row of every table it holds, as PostgreSQL writes it in JSON."
    )


WorkspacePayload = Annotated[
    WorkspaceSuccess | relay.Common,
    strawberry.union(
        "WorkspacePayload", description="Result of createWorkspace and setWorkspaceLimits."
    ),
]
WorkspaceStatusPayload = Annotated[
    WorkspaceSuccess | r.WorkspaceUnchanged | relay.Common,
    strawberry.union(
        "WorkspaceStatusPayload", description="Result of suspendWorkspace and resumeWorkspace."
    ),
]
ExportWorkspacePayload = Annotated[
    WorkspaceExport | relay.Common,
    strawberry.union("ExportWorkspacePayload", description="Result of exportWorkspace."),
]


async def _detail(info: Info, workspace_id: str) -> WorkspaceDetail:
    found = await workspaces.get(info.context.services, workspace_id)
    if found is None:
        raise workspaces.not_found(workspace_id)
    return WorkspaceDetail.of(found)


async def workspace_success(
    info: Info, me: Principal, answer: keyed.Answer, _: bool
) -> WorkspaceSuccess:
    return WorkspaceSuccess(workspace=await _detail(info, str(answer["workspace"])))


async def exported(info: Info, me: Principal, answer: keyed.Answer, _: bool) -> WorkspaceExport:
    """The export is made here, not kept under the idempotency key (it may be large): a
    retry with the same key exports the workspace as it is then."""
    workspace_id = str(answer["workspace"])
    data = await workspaces.export(info.context.services, workspace_id, by=me)
    return WorkspaceExport(workspace=await _detail(info, workspace_id), export=cast(JSON, data))


async def _set_status(
    info: Info, me: Principal, input: WorkspaceInput, status: str
) -> keyed.Answer:
    """suspendWorkspace's and resumeWorkspace's one use case."""
    local = str(input.workspace_id)
    found = await workspaces.set_status(info.context.services, local, status, by=me)
    return {"workspace": found.id}


@strawberry.type
class WorkspaceQueries:
    @listing.connection(WorkspaceFilter, "Which workspaces (default: every one).")
    async def workspaces(
        self, info: Info, me: Principal, page: listing.Page, filter: WorkspaceFilter
    ) -> relay.Connection[WorkspaceDetail]:
        """Every workspace, by name: the default workspace's admins only (NOT_ALLOWED to
        anyone else, as a FORBIDDEN error)."""
        rows = await workspaces.every(info.context.services, by=me)
        if filter.status is not None:
            rows = [w for w in rows if w.status == filter.status]
        after = relay.decode_cursor(page.after, 1)[0] if page.after else None
        listed = [w for w in rows if after is None or w.name > after]
        return relay.connection(
            listed[: page.first + 1],
            WorkspaceDetail.of,
            lambda w: relay.encode_cursor(w.name),
            total=len(rows),
            limit=page.first,
        )


@strawberry.type
class WorkspaceMutations:
    @keyed.mutation(WorkspacePayload, workspace_success)
    async def create_workspace(
        self, info: Info, me: Principal, input: CreateWorkspaceInput
    ) -> keyed.Answer:
        """Create a workspace (the default workspace's admins only); load its principals with
        `taskflow principals load --workspace <id>`."""
        runs, slots, rpm = input.limits.as_tuple() if input.limits else (None, None, None)
        made = await workspaces.create(
            info.context.services,
            input.name,
            by=me,
            max_runs=runs,
            max_open_slots=slots,
            requests_per_minute=rpm,
        )
        return {"workspace": made.id}

    @keyed.mutation(WorkspaceStatusPayload, workspace_success)
    async def suspend_workspace(
        self, info: Info, me: Principal, input: WorkspaceInput
    ) -> keyed.Answer:
        """Suspend a workspace (the default workspace's admins only): its tokens are refused
        (UNAUTHENTICATED, reason WORKSPACE_SUSPENDED), its timers and automatic steps wait
        until it is resumed; WorkspaceUnchanged when it is suspended already."""
        return await _set_status(info, me, input, "suspended")

    @keyed.mutation(WorkspaceStatusPayload, workspace_success)
    async def resume_workspace(
        self, info: Info, me: Principal, input: WorkspaceInput
    ) -> keyed.Answer:
        """Resume a suspended workspace (the default workspace's admins only): its tokens
        work again and its waiting timers and steps are due at once; WorkspaceUnchanged
        when it is active already."""
        return await _set_status(info, me, input, "active")

    @keyed.mutation(WorkspacePayload, workspace_success)
    async def set_workspace_limits(
        self, info: Info, me: Principal, input: SetWorkspaceLimitsInput
    ) -> keyed.Answer:
        """Set a workspace's limits (the default workspace's admins only): new runs, slots
        and requests over them are refused with WorkspaceLimitReached."""
        local = str(input.workspace_id)
        limits = input.limits.as_tuple()
        found = await workspaces.set_limits(info.context.services, local, limits, by=me)
        return {"workspace": found.id}

    @keyed.mutation(ExportWorkspacePayload, exported)
    async def export_workspace(
        self, info: Info, me: Principal, input: WorkspaceInput
    ) -> keyed.Answer:
        """Everything a workspace holds, as JSON (the default workspace's admins only): the
        export `taskflow workspaces export` prints."""
        local = str(input.workspace_id)
        await workspaces.exportable(info.context.services, local, by=me)
        return {"workspace": local}
