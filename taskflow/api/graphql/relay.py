"""Relay vocabulary: global ids, the Node interface, connections, refusals."""

from __future__ import annotations

import base64
import binascii
from enum import Enum
from typing import Generic, TypeVar

import strawberry

from taskflow import errors

T = TypeVar("T")

#: The largest ``first`` any connection accepts.
MAX_FIRST = 100


def to_global_id(type_name: str, local_id: str) -> str:
    """The opaque global id of ``type_name`` object ``local_id``."""
    return base64.urlsafe_b64encode(f"{type_name}:{local_id}".encode()).decode().rstrip("=")


def from_global_id(global_id: str) -> tuple[str, str]:
    """(type name, local id) of a global id; NOT_FOUND for anything malformed."""
    try:
        padded = global_id + "=" * (-len(global_id) % 4)
        type_name, _, local_id = base64.urlsafe_b64decode(padded).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        type_name, local_id = "", ""
    if not type_name or not local_id:
        raise errors.NotFound(f"No object has the id {global_id!r}.")
    return type_name, local_id


def encode_cursor(*parts: str) -> str:
    """An opaque keyset cursor."""
    return base64.urlsafe_b64encode("\x1f".join(parts).encode()).decode()


def decode_cursor(cursor: str, arity: int) -> tuple[str, ...]:
    try:
        parts = tuple(base64.urlsafe_b64decode(cursor.encode()).decode().split("\x1f"))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        parts = ()
    if len(parts) != arity:
        raise errors.ValidationError(
            f"The cursor {cursor!r} is not one this list gave out; pass an endCursor from a "
            "previous page, or omit after.",
            field="after",
        )
    return parts


def check_first(first: int) -> int:
    if not 0 < first <= MAX_FIRST:
        raise errors.ValidationError(
            f"first must be between 1 and {MAX_FIRST}; got {first}.", field="first"
        )
    return first


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
    total_count: int = strawberry.field(description="How many rows match, across all pages.")


@strawberry.enum(description="Why a mutation did not do what was asked.")
class RefusalCode(Enum):
    INVALID_INPUT = strawberry.enum_value(
        "INVALID_INPUT", description="An input value is wrong; see field and message."
    )
    FORBIDDEN = strawberry.enum_value(
        "FORBIDDEN", description="The caller lacks the role or candidacy the action needs."
    )
    NOT_FOUND = strawberry.enum_value(
        "NOT_FOUND", description="The target does not exist or is not visible to the caller."
    )


@strawberry.interface(description="A typed refusal: the mutation changed nothing.")
class Refusal:
    code: RefusalCode = strawberry.field(description="Machine-readable reason.")
    message: str = strawberry.field(description="What went wrong and what to do about it.")


@strawberry.type(description="An input value was refused; nothing changed.")
class InvalidInput(Refusal):
    field: str | None = strawberry.field(description="The input field at fault, when one is.")


@strawberry.type(description="The caller may not do this; nothing changed.")
class NotAllowed(Refusal):
    pass


@strawberry.type(description="The target does not exist or is not visible to the caller.")
class NotFoundRefusal(Refusal):
    pass


def refusal_for(error: errors.TaskflowError) -> InvalidInput | NotAllowed | NotFoundRefusal:
    """The payload refusal for a domain error raised by a use case."""
    if isinstance(error, errors.Forbidden):
        return NotAllowed(code=RefusalCode.FORBIDDEN, message=error.message)
    if isinstance(error, errors.NotFound):
        return NotFoundRefusal(code=RefusalCode.NOT_FOUND, message=error.message)
    return InvalidInput(
        code=RefusalCode.INVALID_INPUT, message=error.message, field=error.facts.get("field")
    )
