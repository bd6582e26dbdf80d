"""GraphQL for principals: ``me``, ``principals``, ``upsertPrincipal``, ``deactivatePrincipal``."""

from __future__ import annotations

from typing import Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

from taskflow import errors
from taskflow.api.graphql import relay
from taskflow.api.graphql.context import Info, caller
from taskflow.core import principals as core
from taskflow.service import principals as service

TYPE_NAME = "Principal"


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

    @classmethod
    def of(cls, principal: core.Principal) -> PrincipalType:
        return cls(
            id=strawberry.ID(relay.to_global_id(TYPE_NAME, principal.id)),
            login=principal.id,
            display_name=principal.display_name,
            email=principal.email,
            roles=list(principal.roles),
            groups=list(principal.groups),
            attributes=cast(JSON, dict(principal.attributes)),
            time_zone=principal.time_zone,
            calendar=principal.calendar,
            active=principal.active,
        )


async def resolve_node(info: Info, local_id: str) -> PrincipalType | None:
    """A principal by id: visible to itself and to admins; others answer as not found."""
    me = await caller(info)
    if local_id != me.id and not me.is_admin:
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
    active: bool = strawberry.field(default=True, description="Whether tokens are accepted.")


@strawberry.type(description="The principal was created or updated.")
class UpsertPrincipalSuccess:
    principal: PrincipalType = strawberry.field(description="The principal as stored.")
    created: bool = strawberry.field(description="True when it did not exist before.")


UpsertPrincipalPayload = Annotated[
    UpsertPrincipalSuccess | relay.InvalidInput | relay.NotAllowed,
    strawberry.union("UpsertPrincipalPayload", description="Result of upsertPrincipal."),
]


@strawberry.input(description="The principal to deactivate.")
class DeactivatePrincipalInput:
    id: strawberry.ID = strawberry.field(description="Global id of the principal.")


@strawberry.type(description="The principal was deactivated; their tokens no longer work.")
class DeactivatePrincipalSuccess:
    principal: PrincipalType = strawberry.field(description="The principal as stored.")


DeactivatePrincipalPayload = Annotated[
    DeactivatePrincipalSuccess | relay.InvalidInput | relay.NotAllowed | relay.NotFoundRefusal,
    strawberry.union("DeactivatePrincipalPayload", description="Result of deactivatePrincipal."),
]


@strawberry.type
class PrincipalQueries:
    @strawberry.field(description="The authenticated caller.")
    async def me(self, info: Info) -> PrincipalType:
        return PrincipalType.of(await caller(info))

    @strawberry.field(description="Principals, ordered by login; for admins only.")
    async def principals(
        self,
        info: Info,
        first: Annotated[
            int, strawberry.argument(description=f"Page size, 1-{relay.MAX_FIRST}.")
        ] = 50,
        after: Annotated[
            str | None, strawberry.argument(description="endCursor of the previous page.")
        ] = None,
        filter: Annotated[
            PrincipalFilter | None, strawberry.argument(description="Which principals.")
        ] = None,
    ) -> relay.Connection[PrincipalType]:
        me = await caller(info)
        relay.check_first(first)
        after_id = relay.decode_typed(after, "text")[0] if after else None
        f = filter or PrincipalFilter()
        found, total, has_next = await service.page(
            info.context.services,
            me,
            first=first,
            after_id=after_id,
            role=f.role,
            group=f.group,
            active=f.active,
            search=f.search,
        )
        edges = [
            relay.Edge(cursor=relay.encode_cursor(p.id), node=PrincipalType.of(p)) for p in found
        ]
        return relay.Connection(
            edges=edges,
            page_info=relay.PageInfo(
                has_next_page=has_next, end_cursor=edges[-1].cursor if edges else None
            ),
            total_count=total,
        )


@strawberry.type
class PrincipalMutations:
    @strawberry.mutation(description="Create or update a principal (admins only).")
    async def upsert_principal(
        self,
        info: Info,
        input: Annotated[
            UpsertPrincipalInput, strawberry.argument(description="The principal's fields.")
        ],
    ) -> UpsertPrincipalPayload:
        me = await caller(info)
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
        }
        try:
            principal, created = await service.upsert(info.context.services, me, data)
        except errors.TaskflowError as exc:
            return relay.refusal_for(exc)  # type: ignore[return-value]
        return UpsertPrincipalSuccess(principal=PrincipalType.of(principal), created=created)

    @strawberry.mutation(
        description="Deactivate a principal: their tokens stop working (admins only)."
    )
    async def deactivate_principal(
        self,
        info: Info,
        input: Annotated[
            DeactivatePrincipalInput, strawberry.argument(description="Whom to deactivate.")
        ],
    ) -> DeactivatePrincipalPayload:
        me = await caller(info)
        try:
            type_name, local_id = relay.from_global_id(str(input.id))
            if type_name != TYPE_NAME:
                raise errors.NotFound(f"No principal has the id {input.id!r}.")
            principal = await service.deactivate(info.context.services, me, local_id)
        except errors.TaskflowError as exc:
            return relay.refusal_for(exc)
        return DeactivatePrincipalSuccess(principal=PrincipalType.of(principal))
