"""Idempotency keys at the edge, and the one skeleton every mutation runs through.

A resolver hands :func:`answer` its use case (``work``: the caller -> the ids its
payload is built from) and the builder of its success from those ids; ``answer``
finds the caller, runs the work once per idempotency key (:func:`once`: the first
answer under a key, ids or refusal, comes back for a retry with the same key and
input, ``service/idempotency.py``), builds the success, and answers a refusal as
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
from taskflow.api.graphql import refusals, relay
from taskflow.api.graphql.context import Info, caller
from taskflow.core.principals import Principal
from taskflow.service import idempotency

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
    return await idempotency.once(
        info.context.services,
        actor=actor,
        operation=operation,
        key=getattr(input, "idempotency_key", None),
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
    payload: object, build: Build[Any], *, argument: str = relay.WHAT_TO_DO
) -> Callable[[InputWork[In]], Any]:
    """Declare the decorated use case as a GraphQL mutation answering the union ``payload``::

        @keyed.mutation(ClaimPayload, slot_success)
        async def claim(self, info: Info, me: Principal, input: ClaimInput) -> keyed.Answer:
            ...  # (docstring: "Take an open slot for yourself.")

    The mutation is named after the method (``claim``; ``cancel_run`` is ``cancelRun``, also
    its idempotency keys' operation) and described by its docstring (one text for readers of
    the code and of the schema); its one argument ``input`` has the type the method's
    ``input`` parameter is annotated with, described by ``argument``. It runs through
    :func:`answer`: ``build`` makes the success from the method's answer."""

    def declare(work: InputWork[In]) -> Any:
        operation = to_camel_case(work.__name__)
        if not work.__doc__:
            raise TypeError(f"The mutation {operation} needs a docstring: it is its description.")
        description = " ".join(work.__doc__.split())
        input_type = typing.get_type_hints(inspect.unwrap(work))["input"]

        async def resolve(self: Any, info: Info, input: Any) -> Any:
            return await answer(
                info, operation, input, lambda me: work(self, info, me, input), build
            )

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
