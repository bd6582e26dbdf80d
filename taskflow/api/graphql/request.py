"""The GraphQL context of one request, for every way a request comes in: ``POST /graphql``,
strawberry's GET route (``api/app.py``) and the agent tools (``api/mcp/calls.py``)."""

from __future__ import annotations

from taskflow.api import access_log
from taskflow.api.graphql.common.context import Context
from taskflow.api.graphql.runs import types as run_types
from taskflow.api.graphql.slots import slot_type
from taskflow.service.access import acting
from taskflow.service.common.container import Services


def context_for(
    services: Services, authorization: str | None, request_id_header: str | None = None
) -> Context:
    """The context of a request carrying ``authorization`` (its raw header). Called in the
    request's task: the subjects its resolvers build read the owners from there
    (``slot_type.OWNERS``)."""
    slot_type.OWNERS.set(services.catalog.owners)
    # No workspace until its caller is authenticated (then the caller's; a link's request
    # reaches its slot by the link's secret token): docs/workspaces.md.
    acting.act_before_authentication()
    return Context(
        services=services,
        request_id=access_log.request_id(request_id_header),
        authorization=authorization,
        run_loader=run_types.run_loader,
    )
