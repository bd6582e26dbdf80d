"""GraphQL for principals: ``me``, ``principals``, ``upsertPrincipal``, ``deactivatePrincipal``."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

from taskflow import errors
from taskflow.api.graphql.access import hours_types
from taskflow.api.graphql.common import keyed, listing, relay, workspace_type
from taskflow.api.graphql.common.context import Info, caller
from taskflow.core.access import principals as core
from taskflow.core.access.principals import Principal
from taskflow.service.access import access
from taskflow.service.access import principals as service

TYPE_NAME = "Principal"


@strawberry.enum(description="A power granted per workflow (admin is a role, global).")
class Power(Enum):
    LEAD = strawberry.enum_value(
        "lead", description="Read, board, report on, cancel and manage links of the work reached."
    )
    MANAGER = strawberry.enum_value("manager", description="The same powers as lead.")
    INTEGRATION = strawberry.enum_value(
        "integration",
        description="An application: start runs, update subjects, raise the granted events, "
        "read the runs and outbox of its workflows.",
    )
    AGENT = strawberry.enum_value(
        "agent",
        description="Opt-in to agent write tools (taskflow mcp) on these workflows: no power "
        "of its own; the principal's other powers and candidacy still decide each act.",
    )


@strawberry.type(name="PowerGrant", description="One scoped power of a principal.")
class PowerGrantType:
    power: Power = strawberry.field(description="The power granted.")
    workflows: list[str] | None = strawberry.field(
        description="The workflows it reaches; null: every workflow."
    )
    teams: list[str] | None = strawberry.field(
        description="Audience keys (role:finance) narrowing it to those teams' slots; "
        "null: every team."
    )
    events: list[str] | None = strawberry.field(
        description="Integration only: the events it may raise; null: every event."
    )


@strawberry.input(description="One scoped power to grant.")
class PowerGrantInput:
    power: Power = strawberry.field(description="The power granted.")
    workflows: list[str] | None = strawberry.field(
        default=None, description="The workflows it reaches; null: every workflow."
    )
    teams: list[str] | None = strawberry.field(
        default=None, description="Audience keys narrowing it to those teams' slots."
    )
    events: list[str] | None = strawberry.field(
        default=None, description="Integration only: the events it may raise."
    )

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"power": self.power.value}
        for name in ("workflows", "teams", "events"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out


@strawberry.type(name="Principal", description="A person or system account known to taskflow.")
class PrincipalType(relay.Node):
    login: str = strawberry.field(
        description="The principal's own id, as tokens and files name it."
    )
    display_name: str = strawberry.field(description="The name people see.")
    email: str | None = strawberry.field(description="Where notifications go, when set.")
    roles: list[str] = strawberry.field(description="Roles, e.g. finance, lead, admin.")
    groups: list[str] = strawberry.field(description="Groups (teams), e.g. emea-support.")
    attributes: JSON = strawberry.field(
        description="Free attributes (e.g. region) that candidate rules compare with subjects."
    )
    time_zone: str = strawberry.field(description="IANA time zone, e.g. Europe/London.")
    calendar: str | None = strawberry.field(
        description="The business calendar of the person's working hours, when set."
    )
    active: bool = strawberry.field(description="False once deactivated: tokens are refused.")
    tokens_valid_after: datetime | None = strawberry.field(
        description="Staff tokens issued before this instant are refused (set by deactivation "
        "and sign out everywhere); null when never set."
    )
    powers: list[PowerGrantType] = strawberry.field(
        description="Scoped powers (lead, manager, integration) per workflow and team."
    )
    working_hours: hours_types.WorkingHoursType | None = strawberry.field(
        description="Weekly working windows or a calendar (setWorkingHours); null: not set."
    )
    leave: list[hours_types.LeaveType] = strawberry.field(
        description="Absences (addLeave), by start."
    )
    workspace_id: strawberry.Private[str]

    @strawberry.field(
        description="The workspace (tenant) it belongs to and acts in; nothing of another "
        "workspace is visible to it (docs/workspaces.md)."
    )
    async def workspace(self, info: Info) -> workspace_type.WorkspaceType:
        return await workspace_type.workspace(info, self.workspace_id or None)

    @classmethod
    def of(cls, principal: core.Principal) -> PrincipalType:
        return relay.copied(
            cls,
            principal,
            login=principal.id,
            roles=list(principal.roles),
            groups=list(principal.groups),
            attributes=cast(JSON, dict(principal.attributes)),
            powers=[
                PowerGrantType(
                    power=Power(g.power),
                    workflows=list(g.workflows) if g.workflows is not None else None,
                    teams=list(g.teams) if g.teams is not None else None,
                    events=list(g.events) if g.events is not None else None,
                )
                for g in principal.powers
            ],
            working_hours=hours_types.WorkingHoursType.of(principal.working_hours),
            leave=[hours_types.LeaveType.of(entry) for entry in principal.leave],
            workspace_id=principal.workspace,
        )


async def resolve_node(info: Info, local_id: str) -> PrincipalType | None:
    """A principal by id: visible to itself and to admins; others answer as not found."""
    me = await caller(info)
    if local_id != me.id and not access.may_manage_principals(me):
        return None
    principal = await service.get(info.context.services, local_id)
    return PrincipalType.of(principal) if principal else None


@strawberry.input(description="Which principals to list.")
class PrincipalFilter:
    role: str | None = strawberry.field(default=None, description="Only holders of this role.")
    group: str | None = strawberry.field(default=None, description="Only members of this group.")
    active: bool | None = strawberry.field(
        default=None, description="Only active (true) or deactivated (false) principals."
    )
    search: str | None = strawberry.field(
        default=None, description="A fragment of the id or display name (case-insensitive)."
    )


@strawberry.input(description="A principal to create, or to update by its login.")
class UpsertPrincipalInput:
    login: str = strawberry.field(description="The principal's id (created when new).")
    display_name: str = strawberry.field(description="The name people see.")
    email: str | None = strawberry.field(default=None, description="Notification address.")
    roles: list[str] = strawberry.field(default_factory=list, description="Roles.")
    groups: list[str] = strawberry.field(default_factory=list, description="Groups.")
    attributes: JSON | None = strawberry.field(default=None, description="Free attributes.")
    time_zone: str = strawberry.field(default="UTC", description="IANA time zone.")
    calendar: str | None = strawberry.field(default=None, description="Business calendar name.")
    active: bool | None = strawberry.field(
        default=None,
        description="Whether tokens are accepted. Left out (null): kept as stored (a new "
        "principal starts active); re-activating someone takes an explicit true. false "
        "deactivates (see deactivatePrincipal).",
    )
    idempotency_key: str | None = relay.idempotency_key_field()
    powers: list[PowerGrantInput] | None = strawberry.field(
        default=None,
        description="Scoped powers; left out, an update keeps the stored ones ([] removes all).",
    )


@strawberry.type
class PrincipalStored:
    """The principal a principal mutation's success answers (first among its fields)."""

    principal: PrincipalType = strawberry.field(description="The principal as stored.")


@strawberry.type(description="The principal was created or updated.")
class UpsertPrincipalSuccess(PrincipalStored):
    created: bool = strawberry.field(description="True when it did not exist before.")


UpsertPrincipalPayload = Annotated[
    UpsertPrincipalSuccess | relay.InvalidInput | relay.NotAllowed | relay.Keyed,
    strawberry.union("UpsertPrincipalPayload", description="Result of upsertPrincipal."),
]


@strawberry.input(description="The principal to deactivate.")
class DeactivatePrincipalInput:
    id: strawberry.ID = strawberry.field(description="Global id of the principal.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type(description="The principal was deactivated; their tokens no longer work.")
class DeactivatePrincipalSuccess(PrincipalStored):
    pass


@strawberry.input(description="Whose tokens to refuse from now on.")
class SignOutEverywhereInput:
    principal_id: strawberry.ID | None = strawberry.field(
        default=None,
        description="Global id of the principal; left out: yourself. Admins only for others.",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type(description="Every token issued before tokensValidAfter is refused now.")
class SignOutEverywhereSuccess(PrincipalStored):
    pass


SignOutEverywherePayload = Annotated[
    SignOutEverywhereSuccess | relay.Common,
    strawberry.union("SignOutEverywherePayload", description="Result of signOutEverywhere."),
]


DeactivatePrincipalPayload = Annotated[
    DeactivatePrincipalSuccess | relay.Common,
    strawberry.union("DeactivatePrincipalPayload", description="Result of deactivatePrincipal."),
]


@strawberry.type
class PrincipalQueries:
    @strawberry.field(description="The authenticated caller.")
    async def me(self, info: Info) -> PrincipalType:
        return PrincipalType.of(await caller(info))

    @listing.connection(PrincipalFilter, "Which principals.", first=50, first_type=listing.FIRST_50)
    async def principals(
        self, info: Info, me: Principal, page: listing.Page, filter: PrincipalFilter
    ) -> relay.Connection[PrincipalType]:
        """Principals, ordered by login; for admins only."""
        found, total, has_next = await service.page(
            info.context.services,
            me,
            first=page.first,
            after_id=relay.decode_typed(page.after, "text")[0] if page.after else None,
            role=filter.role,
            group=filter.group,
            active=filter.active,
            search=filter.search,
        )
        return relay.connection(
            found, PrincipalType.of, relay.id_cursor, total=total, has_next=has_next
        )


async def principal_type(info: Info, principal_id: str) -> PrincipalType:
    """The principal as stored now (a mutation's success), or NotFound."""
    principal = await service.get(info.context.services, principal_id)
    if principal is None:
        raise errors.NotFound(f"No principal has the id {principal_id!r}.")
    return PrincipalType.of(principal)


async def _created(_: Info, created: bool) -> bool:
    return created


_upserted = keyed.built(UpsertPrincipalSuccess, principal=principal_type, created=_created)
_deactivated = keyed.built(DeactivatePrincipalSuccess, principal=principal_type)
_signed_out = keyed.built(SignOutEverywhereSuccess, principal=principal_type)


@strawberry.type
class PrincipalMutations:
    @keyed.mutation(UpsertPrincipalPayload, _upserted, argument="The principal's fields.")
    async def upsert_principal(
        self, info: Info, me: Principal, input: UpsertPrincipalInput
    ) -> keyed.Answer:
        """Create or update a principal (admins only)."""
        data: dict[str, Any] = {
            "id": input.login,
            "display_name": input.display_name,
            "email": input.email,
            "roles": input.roles,
            "groups": input.groups,
            "attributes": input.attributes or {},
            "time_zone": input.time_zone,
            "calendar": input.calendar,
            "active": input.active,
            "powers": [g.as_dict() for g in input.powers] if input.powers is not None else None,
        }
        principal, created = await service.upsert(info.context.services, me, data)
        return {"principal": principal.id, "created": created}

    @keyed.mutation(DeactivatePrincipalPayload, _deactivated, argument="Whom to deactivate.")
    async def deactivate_principal(
        self, info: Info, me: Principal, input: DeactivatePrincipalInput
    ) -> keyed.Answer:
        """Deactivate a principal: their tokens stop working (admins only)."""
        local_id = relay.local_id(input.id, TYPE_NAME, "id")
        principal = await service.deactivate(info.context.services, me, local_id)
        return {"principal": principal.id}

    @keyed.mutation(SignOutEverywherePayload, _signed_out, argument="Whose tokens to refuse.")
    async def sign_out_everywhere(
        self, info: Info, me: Principal, input: SignOutEverywhereInput
    ) -> keyed.Answer:
        """Sign out everywhere: every staff token of the principal (yourself by default; anyone
        for admins) issued until now is refused from now on. Mint a new token afterwards
        (taskflow token)."""
        local_id = me.id
        if input.principal_id is not None:
            local_id = relay.local_id(input.principal_id, TYPE_NAME, "principalId")
        principal = await service.sign_out_everywhere(info.context.services, me, local_id)
        return {"principal": principal.id}
