"""The per-request GraphQL context: services, request id, the caller."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from graphql import FieldNode
from strawberry.dataloader import DataLoader
from strawberry.litestar import BaseContext
from strawberry.types import Info as StrawberryInfo

from taskflow import errors
from taskflow.api import access_log
from taskflow.core.access import principals
from taskflow.service.access import access
from taskflow.service.common.container import Services

UNAUTHORIZED = 401


class Context(BaseContext, kw_only=True):
    """What resolvers see as ``info.context``."""

    services: Services
    request_id: str
    #: The raw ``Authorization`` header, verified lazily by :func:`caller`.
    authorization: str | None = None
    principal: principals.Principal | None = None
    #: Per-request batch loaders by name (e.g. "run"), so lists resolve without N+1 queries.
    loaders: dict[str, DataLoader[Any, Any]] = msgspec.field(default_factory=dict)
    #: This request's loader of runs the caller may read (``runs.types.run_loader``, handed
    #: in by the app): the Slot type reaches its run through it, so the slots room does not
    #: import the runs room, which builds on it (Run.slots).
    run_loader: Callable[[Info], Awaitable[DataLoader[str, Any]]]
    #: The caller's access answers for this request (runs loaded and checked once).
    checked: access.RequestAccess | None = None
    #: The mutation field the cache was filled under (each mutation starts afresh).
    checked_for: str | None = None
    #: Set while ``principal`` is presumed (:func:`presume`): the digest of its row, which
    #: the one statement that follows checks (``claimNext``); None once it is authenticated.
    caller_digest: str | None = None
    #: What ``claim_fast`` did of this request's claim when it leaves the answer to
    #: strawberry's execution: the resolver takes it (once) instead of claiming again.
    claimed: Callable[[], Awaitable[Any]] | None = None
    #: On a live socket: drops the connection (a subscriber too slow to keep up).
    live_dropped: Callable[[], None] | None = None


Info = StrawberryInfo[Context, Any]


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def caller(info: Info) -> principals.Principal:
    """The authenticated principal, or an UNAUTHENTICATED error (HTTP 401)."""
    context = info.context
    if context.principal is not None:
        from taskflow.service.access import acting

        acting.act_as(context.principal)
        return context.principal
    try:
        token = _bearer(context.authorization)
        if token is None:
            raise errors.AuthenticationError(
                "This operation needs a staff token: send the header "
                "'Authorization: Bearer <token>' (mint one with taskflow token <principal-id>)."
            )
        from taskflow.service.access import principals as principal_service

        context.principal = await principal_service.authenticate(context.services, token)
        access_log.note_principal(context.principal.id)
    except errors.AuthenticationError:
        if context.response is not None:
            context.response.status_code = UNAUTHORIZED
        raise
    return context.principal


def presume(info: Info) -> bool:
    """Take the caller as this process last authenticated it, without reading it now
    (``service/access/callers.py``): ``principal`` set, and ``caller_digest`` for the statement
    that checks it and must run next (then :func:`confirm` or :func:`doubt`). False when
    this request knows its caller already or must authenticate it now (:func:`caller`: no
    token, an invalid one, a principal this process does not know or would refuse)."""
    context = info.context
    token = _bearer(context.authorization)
    if context.principal is not None or token is None:
        return False
    from taskflow.service.access import principals as principal_service

    try:
        found = principal_service.presume(context.services, token)
    except errors.AuthenticationError:
        return False  # caller() refuses it, with its 401
    if found is None:
        return False
    context.principal = found.principal
    context.caller_digest = found.digest
    context.checked = None
    return True


def presume_alone(info: Info) -> bool:
    """:func:`presume` for a root field that is its operation's only field (the statement
    it runs next checks the caller): another root field would run beside it and read the
    presumed caller unchecked, so then the caller is authenticated as usual (False)."""
    selections = info.operation.selection_set.selections
    if info.path.prev is not None or len(selections) != 1:
        return False
    if not isinstance(selections[0], FieldNode):
        return False
    return presume(info)


def confirm(info: Info) -> None:
    """The statement that checked the presumed caller acted: the caller is authenticated."""
    context = info.context
    context.caller_digest = None
    if context.principal is not None:
        access_log.note_principal(context.principal.id)


def doubt(info: Info) -> None:
    """Forget the presumed caller (and what was checked for it): :func:`caller` reads it."""
    context = info.context
    context.principal = None
    context.caller_digest = None
    context.checked = None


async def checked(info: Info) -> access.RequestAccess:
    """This request's access cache for the authenticated caller (UNAUTHENTICATED first)."""
    me = await caller(info)
    context = info.context
    root = None
    if info.operation.operation.value == "mutation":
        # Mutations run one after another and change runs: what one read is stale for the next.
        path = info.path
        while path.prev is not None:
            path = path.prev
        root = str(path.key)
    if context.checked is None or root != context.checked_for:
        context.checked = access.RequestAccess(context.services, me)
        context.checked_for = root
    return context.checked
