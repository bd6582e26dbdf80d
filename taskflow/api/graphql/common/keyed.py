"""Idempotency keys at the edge, and the one skeleton every mutation runs through.

A resolver hands :func:`answer` its use case (``work``: the caller -> the ids its
payload is built from) and the builder of its success from those ids; ``answer``
finds the caller, runs the work once per idempotency key (:func:`once`: the first
answer under a key, ids or refusal, comes back for a retry with the same key and
input, ``service/common/idempotency.py``), builds the success, and answers a refusal as
its typed payload member (``refusals.refusal_for``; internal errors are raised
again, to be masked). :func:`mutation` declares a mutation as its use case (a method
of its strawberry type) plus one decorator line.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import strawberry
from strawberry.utils.str_converters import to_camel_case

from taskflow import errors
from taskflow.api.graphql.common import refusals, relay
from taskflow.api.graphql.common.context import Info, caller, confirm, doubt, presume
from taskflow.core.access.principals import Principal
from taskflow.service.access import callers
from taskflow.service.common import idempotency

Answer = dict[str, Any]
P = TypeVar("P")
#: A mutation's use case: the caller -> the plain data (ids) its payload is built from.
Work = Callable[[Principal], Awaitable[Answer]]
#: A mutation's success from (info, caller, the work's answer, whether it was given again).
Build = Callable[[Info, Principal, Answer, bool], Awaitable[P]]


def request_of(input: Any) -> dict[str, Any]:
    """The input as plain data, without its key: what a retry must repeat."""
    data = dataclasses.asdict(input)
    data.pop("idempotency_key", None)
    # Optional fields added to an input after keys were stored count only when given, so a
    # retry sent across the deploy that added them keeps its fingerprint.
    for name in ADDED_LATER:
        if name in data and data[name] is None:
            del data[name]
    return data


#: Such fields (``StartRunInput.version``).
ADDED_LATER = ("version",)


async def once(
    info: Info,
    actor: str,
    operation: str,
    input: Any,
    work: Callable[[], Awaitable[Answer]],
) -> tuple[Answer, bool]:
    """(the answer, whether it was given again) for ``input``'s key; see the module doc."""
    key = getattr(input, "idempotency_key", None)
    if key is None:  # nothing to store or compare: the input is not even looked at
        return await work(), False
    return await idempotency.once(
        info.context.services,
        actor=actor,
        operation=operation,
        key=key,
        request=request_of(input),
        work=work,
    )


def built(kind: Callable[..., P], **fields: Callable[[Info, Any], Awaitable[Any]]) -> Build[P]:
    """A build making ``kind`` with each field resolved from the answer's value of that name:
    ``built(SlotSuccess, slot=resolve_slot)`` is ``SlotSuccess(slot=await resolve_slot(info,
    answer["slot"]))``."""

    async def build(info: Info, _: Principal, found: Answer, __: bool) -> P:
        return kind(**{name: await get(info, found[name]) for name, get in fields.items()})

    return build


async def answer_presumed(
    info: Info, operation: str, input: Any, work: Work, build: Build[P], success: type[Any]
) -> P:
    """:func:`answer` for a use case whose one statement checks its caller itself
    (``claimNext``): without an idempotency key, the caller as this process last
    authenticated it is not read first (``context.presume``); ``work`` passes
    ``info.context.caller_digest`` to its statement, and raises ``CallerChanged`` when the
    statement did nothing: then the caller is authenticated and ``work`` runs again the
    ordinary way. A ``success`` confirms the caller; a refusal (the statement did not get to
    check it, e.g. ``Busy``) is answered as it is, and later fields read the caller afresh."""
    if getattr(input, "idempotency_key", None) is None and presume(info):
        try:
            found = await answer(info, operation, input, work, build)
        except callers.CallerChanged:
            doubt(info)
        except BaseException:
            doubt(info)
            raise
        else:
            if isinstance(found, success):
                confirm(info)
            else:
                doubt(info)
            return found
    return await answer(info, operation, input, work, build)


async def answer(info: Info, operation: str, input: Any, work: Work, build: Build[P]) -> P:
    """The skeleton of every mutation: see the module doc."""
    me = await caller(info)
    try:
        found, again = await once(info, me.id, operation, input, lambda: work(me))
        return await build(info, me, found, again)
    except errors.TaskflowError as exc:
        refused: P = refusals.refusal_for(exc)
        return refused


In = TypeVar("In")
#: A mutation's use case as a method of its strawberry type: (self, info, the caller, the
#: input) -> the answer's ids.
InputWork = Callable[[Any, Info, Principal, In], Awaitable[Answer]]


def mutation(
    payload: object,
    build: Build[Any],
    *,
    argument: str = relay.WHAT_TO_DO,
    presumed: type[Any] | None = None,
) -> Callable[[InputWork[In]], Any]:
    """Declare the decorated use case as a GraphQL mutation answering the union ``payload``::

        @keyed.mutation(ClaimPayload, slot_success)
        async def claim(self, info: Info, me: Principal, input: ClaimInput) -> keyed.Answer:
            ...  # (docstring: "Take an open slot for yourself.")

    The mutation is named after the method (``claim``; ``cancel_run`` is ``cancelRun``, also
    its idempotency keys' operation) and described by its docstring (one text for readers of
    the code and of the schema); its one argument ``input`` has the type the method's
    ``input`` parameter is annotated with, described by ``argument``. It runs through
    :func:`answer`: ``build`` makes the success from the method's answer. With ``presumed``
    (the success type), it runs through :func:`answer_presumed` instead: the method's statement
    checks the caller itself (``info.context.caller_digest``)."""

    def declare(work: InputWork[In]) -> Any:
        operation = to_camel_case(work.__name__)
        if not work.__doc__:
            raise TypeError(f"The mutation {operation} needs a docstring: it is its description.")
        description = " ".join(work.__doc__.split())
        input_type = typing.get_type_hints(inspect.unwrap(work))["input"]

        async def resolve(self: Any, info: Info, input: Any) -> Any:
            def bound(me: Principal) -> Awaitable[Answer]:
                return work(self, info, me, input)

            if presumed is not None:
                return await answer_presumed(info, operation, input, bound, build, presumed)
            return await answer(info, operation, input, bound, build)

        resolve.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [
                inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                inspect.Parameter("info", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Info),
                inspect.Parameter(
                    "input",
                    inspect.Parameter.POSITIONAL_OR_KEYWORD,
                    annotation=Annotated[input_type, strawberry.argument(description=argument)],
                ),
            ],
            return_annotation=payload,
        )
        return strawberry.mutation(resolver=resolve, description=description)

    return declare
