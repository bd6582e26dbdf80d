"""Idempotency keys at the edge: every mutation's input may carry ``idempotencyKey``.

A resolver hands its use case to :func:`once` as a function returning the ids its
payload is built from; the first answer under a key (those ids, or the refusal)
comes back for a retry with the same key and input (``service/idempotency.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from taskflow.api.graphql.context import Info
from taskflow.service import idempotency

Answer = dict[str, Any]


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
