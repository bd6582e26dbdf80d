"""The schema: every area's queries and mutations merged, with limits and error shaping."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

import strawberry
from graphql.validation import ASTValidationRule, NoSchemaIntrospectionCustomRule
from strawberry.extensions import max_aliases, query_depth_limiter
from strawberry.schema.config import StrawberryConfig

from taskflow import errors
from taskflow.api import limits as edge
from taskflow.api.graphql.access import principals, working_hours
from taskflow.api.graphql.automations import automations
from taskflow.api.graphql.clocks import calendars, dry_run, team_calendars, timers
from taskflow.api.graphql.common import guards, plain_fields, relay
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.compose import compensations, detach
from taskflow.api.graphql.delivery import delivery, notifications, webhook_mutations, webhooks
from taskflow.api.graphql.history import history, insights, undo
from taskflow.api.graphql.links import links
from taskflow.api.graphql.live import subscriptions
from taskflow.api.graphql.operate import attention, bulk, operate
from taskflow.api.graphql.reports import reports
from taskflow.api.graphql.runs import run_list, subject_mutations, types
from taskflow.api.graphql.slots import candidate_mutations, work, work_mutations
from taskflow.api.graphql.steps import steps
from taskflow.api.graphql.versions import definitions, versions
from taskflow.api.graphql.workspaces import workspaces

#: Bounds on every request (documented in README.md, "GraphQL limits").
MAX_DEPTH = 12
MAX_ALIASES = 30
MAX_TOKENS = 4000

NodeResolver = Callable[[Info, str], Awaitable[relay.Node | None]]

#: Type name in a global id -> how to fetch it (None when the caller may not see it).
NODE_RESOLVERS: dict[str, NodeResolver] = {
    principals.TYPE_NAME: principals.resolve_node,
    types.RUN: work.resolve_run,
    types.SLOT: work.resolve_slot,
    links.TYPE_NAME: links.resolve_node,
    notifications.TYPE_NAME: notifications.resolve_node,
    timers.TYPE_NAME: timers.resolve_node,
    webhooks.TYPE_NAME: webhooks.resolve_node,
    steps.TYPE_NAME: steps.resolve_node,
}


@strawberry.type(description="Entry points for reading.")
class Query(
    principals.PrincipalQueries,
    work.WorkQueries,
    notifications.NotificationQueries,
    reports.ReportQueries,
    timers.TimerQueries,
    dry_run.DryRunQueries,
    attention.AttentionQueries,
    definitions.DefinitionQueries,
    run_list.RunListQueries,
    webhooks.WebhookQueries,
    calendars.CalendarQueries,
    team_calendars.TeamCalendarQueries,
    history.HistoryQueries,
    insights.InsightsQueries,
    automations.AutomationQueries,
    workspaces.WorkspaceQueries,
):
    @strawberry.field(description="Any object by its global id; null when absent or not visible.")
    async def node(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="A global id.")],
    ) -> relay.Node | None:
        try:
            type_name, local_id = relay.from_global_id(str(id), "id")
        except errors.NotFound:
            return None
        resolver = NODE_RESOLVERS.get(type_name)
        return await resolver(info, local_id) if resolver else None


@strawberry.type(description="Entry points for changing things.")
class Mutation(
    principals.PrincipalMutations,
    working_hours.WorkingHoursMutations,
    work_mutations.WorkMutations,
    candidate_mutations.CandidateMutations,
    subject_mutations.SubjectMutations,
    links.LinkMutations,
    notifications.NotificationMutations,
    delivery.DeliveryMutations,
    timers.TimerMutations,
    steps.StepMutations,
    detach.ComposeMutations,
    compensations.CompensationMutations,
    operate.OperateMutations,
    bulk.BulkMutations,
    versions.VersionMutations,
    webhook_mutations.WebhookMutations,
    undo.UndoMutations,
    automations.AutomationMutations,
    workspaces.WorkspaceMutations,
    team_calendars.TeamCalendarMutations,
):
    pass


def build_schema(
    *,
    max_depth: int = MAX_DEPTH,
    introspection: bool = True,
    limits: edge.Limits | None = None,
) -> strawberry.Schema:
    """The taskflow GraphQL schema (``max_depth`` is lowered only by tests).

    Without ``introspection`` (the default outside ``TASKFLOW_ENV=dev``), ``__schema`` and
    ``__type`` are refused at validation; ``__typename`` stays (clients need it).
    """
    caps = limits or edge.Limits()
    # The limit rules are built once: the validation cache keys on the rules, so rules
    # made afresh per request (as the limiter extensions do) would never let it hit.
    rules: list[type[ASTValidationRule]] = [
        query_depth_limiter.create_validator(max_depth, None, None),
        max_aliases.create_validator(MAX_ALIASES),
    ]
    if not introspection:
        rules.append(NoSchemaIntrospectionCustomRule)
    built = guards.QuietSchema(
        query=Query,
        mutation=Mutation,
        subscription=subscriptions.Subscription,
        types=[principals.PrincipalType, types.RunType, types.SlotType],
        config=StrawberryConfig(auto_camel_case=True),
        extensions=[
            # Time the request; parse and validate once per text (frontends send the same few
            # operations over and over), within the token cap and the limit rules, then the
            # cost limit; shape and mask the errors: one extension, one set of hooks.
            lambda: guards.Gate(rules=rules, max_tokens=MAX_TOKENS, limit=caps.max_query_cost),
        ],
    )
    guards.guard_arguments(built, caps)
    # Plain fields (an attribute, no resolver, no argument) answered without graphql-core's
    # per-field machinery: a page of 50 slots has about 850 of them.
    built.execution_context_class = plain_fields.executor_for(built._schema)
    return built


def printed_schema() -> str:
    """The SDL committed as graphql/schema.graphql."""
    return str(build_schema()).rstrip() + "\n"
