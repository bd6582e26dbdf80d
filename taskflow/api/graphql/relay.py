"""Relay vocabulary: global ids, the Node interface, connections, refusals."""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Iterable
from datetime import datetime
from enum import Enum
from typing import Any, Generic, TypeVar

import strawberry
from strawberry.types import nodes

from taskflow import errors
from taskflow.api.graphql import timing

T = TypeVar("T")

#: The largest ``first`` any connection accepts.
MAX_FIRST = 100


def to_global_id(type_name: str, local_id: str) -> str:
    """The opaque global id of ``type_name`` object ``local_id``."""
    return base64.urlsafe_b64encode(f"{type_name}:{local_id}".encode()).decode().rstrip("=")


#: The largest integer PostgreSQL's bigint holds (ids and cursor positions).
MAX_BIGINT = 2**63 - 1
#: Local id shapes by type name ("uuid", "bigint", "text"); unknown types are "text".
ID_SHAPES = {
    "Run": "uuid",
    "Slot": "uuid",
    "MagicLink": "uuid",
    "Notification": "bigint",
    "Principal": "text",
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


def encode_cursor(*parts: str) -> str:
    """An opaque keyset cursor."""
    return base64.urlsafe_b64encode("\x1f".join(parts).encode()).decode()


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
    NOT_CANDIDATE = strawberry.enum_value(
        "NOT_CANDIDATE", description="The principal is not among the slot's candidates."
    )
    ALREADY_CLAIMED = strawberry.enum_value(
        "ALREADY_CLAIMED", description="Someone holds the slot already; see holder."
    )
    NOT_HOLDER = strawberry.enum_value(
        "NOT_HOLDER", description="Only the slot's holder may do this."
    )
    NOT_DELEGATE = strawberry.enum_value(
        "NOT_DELEGATE", description="Only the holder or a delegate may hand the slot over."
    )
    SLOT_NOT_OPEN = strawberry.enum_value(
        "SLOT_NOT_OPEN", description="The slot is no longer open (satisfied or cancelled)."
    )
    STALE_VERSION = strawberry.enum_value(
        "STALE_VERSION", description="The slot (or run) changed since the caller loaded it; reload."
    )
    PAYLOAD_INVALID = strawberry.enum_value(
        "PAYLOAD_INVALID", description="The payload does not fit the slot's fields; see problems."
    )
    WRONG_EVENT = strawberry.enum_value(
        "WRONG_EVENT", description="The slot waits for another event."
    )
    RUN_NOT_ACTIVE = strawberry.enum_value(
        "RUN_NOT_ACTIVE", description="The run has ended; nothing more can happen on it."
    )
    RUN_EXISTS = strawberry.enum_value(
        "RUN_EXISTS", description="The subject already has a live run of this workflow."
    )
    MOVE_NOT_ALLOWED = strawberry.enum_value(
        "MOVE_NOT_ALLOWED", description="The move's guard, checklist or permission refuses it."
    )
    NO_SLOT_WAITING = strawberry.enum_value(
        "NO_SLOT_WAITING", description="No slot of the target waits for this event now."
    )
    AMBIGUOUS_EVENT = strawberry.enum_value(
        "AMBIGUOUS_EVENT", description="Several slots wait for the event; narrow the target."
    )
    NOT_RAISER = strawberry.enum_value(
        "NOT_RAISER",
        description="The event's raisers (or the application's grants) do not include the caller.",
    )
    RECIPIENT_NOT_ALLOWED = strawberry.enum_value(
        "RECIPIENT_NOT_ALLOWED",
        description="The slot's candidates and outsiders rule do not name this link recipient.",
    )
    NOTHING_TO_CLAIM = strawberry.enum_value(
        "NOTHING_TO_CLAIM", description="No open slot the caller may take matches."
    )
    LINK_UNUSABLE = strawberry.enum_value(
        "LINK_UNUSABLE", description="The magic link cannot be used (any reason, told alike)."
    )
    LINKS_NOT_ALLOWED = strawberry.enum_value(
        "LINKS_NOT_ALLOWED", description="The slot's definition does not allow magic links."
    )
    LINK_NOT_REQUESTED = strawberry.enum_value(
        "LINK_NOT_REQUESTED",
        description="The notification asks for no magic link (a principal's, or its reminder "
        "has no with_link).",
    )
    TOO_MANY_REQUESTS = strawberry.enum_value(
        "TOO_MANY_REQUESTS", description="Too many unusable links from this client; wait."
    )
    TIMER_NOT_DEAD = strawberry.enum_value(
        "TIMER_NOT_DEAD", description="Only a DEAD timer can be retried or discarded."
    )
    STEP_NOT_PARKED = strawberry.enum_value(
        "STEP_NOT_PARKED", description="Only a PARKED automatic step can be retried."
    )
    CLOCKS_UNCHANGED = strawberry.enum_value(
        "CLOCKS_UNCHANGED",
        description="pauseClocks found no running clock, or resumeClocks no paused one.",
    )
    TIMER_SPENT = strawberry.enum_value(
        "TIMER_SPENT", description="Only an armed or dead timer can be rescheduled."
    )
    IDEMPOTENCY_KEY_REUSED = strawberry.enum_value(
        "IDEMPOTENCY_KEY_REUSED",
        description="The idempotencyKey was used before for another input (or its first "
        "answer cannot be given again); use a new key.",
    )
    BUSY = strawberry.enum_value(
        "BUSY",
        description="Others changed the same data at the same moment, again and again; nothing "
        "changed. Retryable: send the same request again after retryAfterSeconds.",
    )


@strawberry.interface(description="A typed refusal: the mutation changed nothing.")
class Refusal:
    code: RefusalCode = strawberry.field(description="Machine-readable reason.")
    message: str = strawberry.field(description="What went wrong and what to do about it.")

    def __post_init__(self) -> None:
        # Every typed refusal passes here: counted by code for /metrics.
        timing.note_refusal(self.code.name)


@strawberry.type(description="An input value was refused; nothing changed.")
class InvalidInput(Refusal):
    field: str | None = strawberry.field(description="The input field at fault, when one is.")


@strawberry.type(description="The caller may not do this; nothing changed.")
class NotAllowed(Refusal):
    pass


@strawberry.type(description="The target does not exist or is not visible to the caller.")
class NotFoundRefusal(Refusal):
    pass


@strawberry.type(
    description="The idempotencyKey was used before by you for this mutation with another "
    "input, or its first answer cannot be given again; nothing changed. Use a new key."
)
class IdempotencyKeyReused(Refusal):
    pass


@strawberry.type(
    description="Others changed the same data at the same moment, again and again; nothing "
    "changed. The same request again, after retryAfterSeconds, has the effect it asked for."
)
class Busy(Refusal):
    retry_after_seconds: int = strawberry.field(
        description="How many seconds to wait before sending the same request again."
    )


def refusal_for(
    error: errors.TaskflowError,
) -> InvalidInput | NotAllowed | NotFoundRefusal | IdempotencyKeyReused | Busy:
    """The payload refusal for a domain error raised by a use case."""
    if error.code == "IDEMPOTENCY_KEY_REUSED":
        return IdempotencyKeyReused(code=RefusalCode.IDEMPOTENCY_KEY_REUSED, message=error.message)
    if isinstance(error, errors.Busy):
        return Busy(
            code=RefusalCode.BUSY,
            message=error.message,
            retry_after_seconds=int(error.facts.get("retry_after_seconds", 1)),
        )
    if isinstance(error, errors.Forbidden):
        return NotAllowed(code=RefusalCode.FORBIDDEN, message=error.message)
    if isinstance(error, errors.NotFound):
        return NotFoundRefusal(code=RefusalCode.NOT_FOUND, message=error.message)
    return InvalidInput(
        code=RefusalCode.INVALID_INPUT, message=error.message, field=error.facts.get("field")
    )
