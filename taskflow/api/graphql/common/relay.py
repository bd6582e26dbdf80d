"""Relay vocabulary: global ids, the Node interface, connections; the refusals every mutation
may answer (declared in ``refused``)."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Annotated, Any, Generic, TypeVar, cast, overload

import strawberry
from strawberry.types import nodes
from strawberry.types.base import get_object_definition

from taskflow import errors
from taskflow.api.graphql.common.refused import Busy as Busy
from taskflow.api.graphql.common.refused import Common as Common
from taskflow.api.graphql.common.refused import IdempotencyKeyReused as IdempotencyKeyReused
from taskflow.api.graphql.common.refused import InvalidInput as InvalidInput
from taskflow.api.graphql.common.refused import Keyed as Keyed
from taskflow.api.graphql.common.refused import NotAllowed as NotAllowed
from taskflow.api.graphql.common.refused import NotFoundRefusal as NotFoundRefusal
from taskflow.api.graphql.common.refused import Refusal as Refusal
from taskflow.api.graphql.common.refused import WorkspaceLimitReached as WorkspaceLimitReached
from taskflow.core.common.refusals import RefusalCode as RefusalCode

T = TypeVar("T")
R = TypeVar("R")

#: The largest ``first`` any connection accepts.
MAX_FIRST = 100


def to_global_id(type_name: str, local_id: str) -> str:
    """The opaque global id of ``type_name`` object ``local_id``."""
    return base64.urlsafe_b64encode(f"{type_name}:{local_id}".encode()).decode().rstrip("=")


@overload
def node_id(type_name: str, local_id: str | int) -> strawberry.ID: ...
@overload
def node_id(type_name: str, local_id: str | int | None) -> strawberry.ID | None: ...
def node_id(type_name: str, local_id: str | int | None) -> strawberry.ID | None:
    """The global id as a GraphQL ``ID``; None for no object (``local_id`` None or empty)."""
    if local_id is None or local_id == "":
        return None
    return strawberry.ID(to_global_id(type_name, str(local_id)))


#: The largest integer PostgreSQL's bigint holds (ids and cursor positions).
MAX_BIGINT = 2**63 - 1
#: Local id shapes by type name ("uuid", "bigint", "text"); unknown types are "text".
ID_SHAPES = {
    "Run": "uuid",
    "Slot": "uuid",
    "MagicLink": "uuid",
    "Notification": "bigint",
    "Principal": "text",
    "WebhookEndpoint": "uuid",
    "WebhookDelivery": "bigint",
}


def _malformed(value: str, field: str, what: str) -> errors.ValidationError:
    from taskflow.api import limits

    return errors.ValidationError(
        f"{field} {limits.prefix(value)} is not {what} taskflow gave out: pass the value as it "
        "came in a previous answer.",
        field=field,
    )


def _part(text: str, shape: str) -> object:
    """``text`` parsed as ``shape`` ("uuid", "bigint", "int", "datetime", "text");
    ValueError when it is not one."""
    if "\x00" in text or any("\ud800" <= c <= "\udfff" for c in text):
        raise ValueError(text)
    if shape == "uuid":
        return str(uuid.UUID(text))
    if shape in ("bigint", "int"):
        if not text.lstrip("-").isdigit() or len(text) > 20:
            raise ValueError(text)
        number = int(text)
        if not -MAX_BIGINT <= number <= MAX_BIGINT or (shape == "int" and abs(number) >= 2**31):
            raise ValueError(text)
        return number
    if shape == "datetime":
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            raise ValueError(text)
        return moment
    if len(text) > 200:
        raise ValueError(text)
    return text


def from_global_id(global_id: str, field: str = "id") -> tuple[str, str]:
    """(type name, local id) of a global id.

    INVALID_INPUT (on ``field``) for anything that is no id taskflow gives out: not
    base64, no type, or a local id of the wrong shape (a run id that is no uuid, a
    notification id out of bigint's range); so nothing malformed reaches SQL.
    """
    try:
        padded = global_id + "=" * (-len(global_id) % 4)
        type_name, _, local_id = base64.urlsafe_b64decode(padded).decode().partition(":")
        if not type_name or not local_id:
            raise ValueError(global_id)
        local_id = str(_part(local_id, ID_SHAPES.get(type_name, "text")))
    except (binascii.Error, UnicodeError, ValueError):
        raise _malformed(global_id, field, "an id") from None
    return type_name, local_id


def local_id(global_id: str, type_name: str, field: str) -> str:
    """The local id of a ``type_name`` global id given in ``field``.

    INVALID_INPUT when malformed, NOT_FOUND when it names another type."""
    found_type, local = from_global_id(str(global_id), field)
    if found_type != type_name:
        raise errors.NotFound(f"No {type_name} has the id given in {field}.", field=field)
    return local


def number_id(global_id: str, type_name: str, what: str, field: str) -> int:
    """The numeric local id of a ``type_name`` global id given in ``field``; NOT_FOUND ("No
    ``what`` has the id ...") when it names another type or no bigint."""
    found_type, local = from_global_id(str(global_id), field)
    if found_type != type_name or not local.isdigit() or len(local) > 18:
        raise errors.NotFound(f"No {what} has the id {global_id!r}.", field=field)
    return int(local)


def copied(kind: type[T], source: Any, **given: Any) -> T:
    """``kind`` (a strawberry type, or a plain dataclass such as a core value made from an
    input) made from ``source``: each field not ``given`` is the attribute of the same name,
    or for a mapping (a mutation's answer) the value of that key (an ``of(row)`` converter
    names only what differs); a :class:`Node`'s ``id``, unless given, is the global id of
    the source's ``id`` under the type's GraphQL name."""
    read: Callable[[str], Any] = (
        source.__getitem__ if isinstance(source, Mapping) else partial(getattr, source)
    )
    definition = get_object_definition(kind)
    if definition is None:
        names = [f.name for f in dataclasses.fields(cast(Any, kind)) if f.init]
    else:
        names = [f.python_name for f in definition.fields if f.base_resolver is None]
        if issubclass(kind, Node) and "id" not in given:
            given["id"] = node_id(definition.name, read("id"))
    return kind(**{name: read(name) for name in names if name not in given}, **given)


def encode_cursor(*parts: str) -> str:
    """An opaque keyset cursor."""
    return base64.urlsafe_b64encode("\x1f".join(parts).encode()).decode()


def id_cursor(row: Any) -> str:
    """The cursor of a row listed in ``id`` order."""
    return encode_cursor(str(row.id))


def decode_cursor(cursor: str, arity: int) -> tuple[str, ...]:
    """The ``arity`` text parts of a cursor; INVALID_INPUT on ``after`` otherwise."""
    try:
        parts = tuple(base64.urlsafe_b64decode(cursor.encode()).decode().split("\x1f"))
    except (binascii.Error, UnicodeError, ValueError):
        parts = ()
    if len(parts) != arity:
        raise _malformed(cursor, "after", "a cursor")
    return parts


IDEMPOTENCY_KEY_DESCRIPTION = (
    "Optional key (1-200 characters, e.g. a UUID) of yours: sending the same input again "
    "with it returns the first answer instead of acting twice; the same key with another "
    "input is refused (IdempotencyKeyReused). Scoped to you and this mutation, kept 7 days."
)


def idempotency_key_field() -> Any:
    """The optional ``idempotencyKey`` field every mutation input carries."""
    return strawberry.field(default=None, description=IDEMPOTENCY_KEY_DESCRIPTION)


def decode_typed(cursor: str, *shapes: str, field: str = "after") -> tuple[Any, ...]:
    """A cursor's parts parsed by ``shapes`` (see :func:`_part`; "" in a part shaped
    "datetime?" is None); INVALID_INPUT on ``field`` for anything else."""
    parts = decode_cursor(cursor, len(shapes))
    try:
        return tuple(
            None if shape.endswith("?") and not part else _part(part, shape.rstrip("?"))
            for part, shape in zip(parts, shapes, strict=True)
        )
    except ValueError:
        raise _malformed(cursor, field, "a cursor") from None


def after_id(after: str | None) -> int | None:
    """The row id an ``after`` cursor of a list in ``id`` order names (see :func:`id_cursor`;
    None: no cursor, from the start); INVALID_INPUT on ``after`` for anything else."""
    if not after:
        return None
    (found,) = decode_typed(after, "bigint")
    return int(found)


def check_first(first: int) -> int:
    if not 0 < first <= MAX_FIRST:
        raise errors.ValidationError(
            f"first must be between 1 and {MAX_FIRST}; got {first}.", field="first"
        )
    return first


def selects(info: Any, name: str) -> bool:
    """True when the current field's selection asks for ``name`` (fragments included):
    a connection counts its rows only when ``totalCount`` is asked for."""

    def walk(selections: Iterable[nodes.Selection]) -> bool:
        for selection in selections:
            if isinstance(selection, nodes.SelectedField) and selection.name == name:
                return True
            if walk(selection.selections):
                return True
        return False

    return any(walk(field.selections) for field in info.selected_fields)


@strawberry.interface(description="An object with a global id, fetchable again through node(id:).")
class Node:
    id: strawberry.ID = strawberry.field(description="The object's global, opaque id.")


@strawberry.type(description="Where a page of a connection stands.")
class PageInfo:
    has_next_page: bool = strawberry.field(description="True when more rows follow this page.")
    end_cursor: str | None = strawberry.field(
        description="Pass as `after` to get the next page; null on an empty page."
    )


@strawberry.type(description="One row of a connection with its cursor.")
class Edge(Generic[T]):
    cursor: str = strawberry.field(description="Opaque position of this row.")
    node: T = strawberry.field(description="The row.")


@strawberry.type(description="A page of a list, Relay-style.")
class Connection(Generic[T]):
    edges: list[Edge[T]] = strawberry.field(description="The rows of this page, in order.")
    page_info: PageInfo = strawberry.field(description="Whether more rows follow.")
    total_count: int | None = strawberry.field(
        description="How many rows match, across all pages; null where counting is not cheap "
        "(the outbox-wide notification listings of integrations)."
    )


In = TypeVar("In")
#: How a mutation's ``input`` argument is described (``keyed.mutation``'s ``argument``); the
#: operator verbs say it in one word.
WHAT_TO_DO, WHAT = "What to do.", "What."
#: A mutation's ``input`` argument (``input: relay.WhatToDo[MintMagicLinkInput]``).
WhatToDo = Annotated[In, strawberry.argument(description=WHAT_TO_DO)]

#: The ``first`` and ``after`` arguments of a connection.
First = Annotated[int, strawberry.argument(description=f"Page size, at most {MAX_FIRST}.")]
After = Annotated[str | None, strawberry.argument(description="endCursor of the previous page.")]


def connection(
    rows: Sequence[R],
    node: Callable[[R], T],
    cursor: Callable[[R], str],
    *,
    total: int | None,
    limit: int | None = None,
    has_next: bool = False,
) -> Connection[T]:
    """A page of ``rows`` as a connection. With ``limit``, ``rows`` is what was fetched (up
    to ``limit + 1``): a row past the limit only says that a next page exists."""
    if limit is not None:
        has_next = len(rows) > limit
        rows = rows[:limit]
    return page([Edge(cursor=cursor(row), node=node(row)) for row in rows], has_next, total)


def page(edges: list[Edge[T]], has_next: bool, total: int | None) -> Connection[T]:
    """A connection of ready ``edges``."""
    end = edges[-1].cursor if edges else None
    return Connection(
        edges=edges, page_info=PageInfo(has_next_page=has_next, end_cursor=end), total_count=total
    )
