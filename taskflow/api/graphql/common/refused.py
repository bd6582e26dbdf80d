"""Typed refusals in GraphQL: the ``Refusal`` interface, and one declaration per refusal type.

``@refusal(core.NotHolder)`` over a strawberry type declares it (described by its docstring)
as the GraphQL type of that refusal class: it fills :data:`TABLE`, the builder of each class's
GraphQL type, which ``refusals.refusal_for`` reads (the nearest class in an error's MRO wins).
The type's code is the class's; its facts are the error's attributes of the same names as the
type's fields, unless ``facts`` builds them. The refusals every mutation may answer are here;
the others are in ``refusals``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import strawberry
from strawberry.types.base import get_object_definition
from strawberry.types.field import StrawberryField
from typing_extensions import dataclass_transform

from taskflow import errors
from taskflow.api.graphql.common import timing
from taskflow.api.graphql.common.enums import RefusalCode
from taskflow.core.common import refusals as core
from taskflow.core.workspaces import refusals as workspace_refusals


@strawberry.interface(description="A typed refusal: the mutation changed nothing.")
class Refusal:
    code: RefusalCode = strawberry.field(description="Machine-readable reason.")
    message: str = strawberry.field(description="What went wrong and what to do about it.")

    def __post_init__(self) -> None:
        # Every typed refusal passes here: counted by code for /metrics.
        timing.note_refusal(self.code.name)


R = TypeVar("R", bound=Refusal)
Build = Callable[[Any], Refusal]
#: The GraphQL refusal of each refusal class (the nearest class in an error's MRO wins).
TABLE: dict[type[errors.TaskflowError], Build] = {}


@dataclass_transform(
    order_default=False, kw_only_default=True, field_specifiers=(strawberry.field, StrawberryField)
)
def refusal(
    *answers: type[errors.TaskflowError], facts: Callable[[Any], dict[str, Any]] | None = None
) -> Callable[[type[R]], type[R]]:
    """Declare the decorated class the GraphQL type (described by its docstring) of the
    refusal classes ``answers``, with the first one's code; see the module doc."""

    def declare(cls: type[R]) -> type[R]:
        kind = strawberry.type(cls, description=" ".join((cls.__doc__ or "").split()))
        code = RefusalCode(answers[0].code)
        fields = get_object_definition(kind, strict=True).fields
        names = [f.python_name for f in fields if f.python_name not in ("code", "message")]

        def build(error: Any) -> Refusal:
            found = facts(error) if facts else {name: getattr(error, name) for name in names}
            return kind(code=code, message=error.message, **found)

        TABLE.update(dict.fromkeys(answers, build))
        return kind

    return declare


# A TaskflowError whose code names no refusal (raised by code not converted yet, or a child of
# TaskflowError with no entry): the input was refused, as it always was.
@refusal(
    errors.ValidationError, errors.TaskflowError, facts=lambda e: {"field": e.facts.get("field")}
)
class InvalidInput(Refusal):
    """An input value was refused; nothing changed."""

    field: str | None = strawberry.field(description="The input field at fault, when one is.")


@refusal(errors.Forbidden)
class NotAllowed(Refusal):
    """The caller may not do this; nothing changed."""


@refusal(errors.NotFound)
class NotFoundRefusal(Refusal):
    """The target does not exist or is not visible to the caller."""


@refusal(core.IdempotencyKeyReused)
class IdempotencyKeyReused(Refusal):
    """The idempotencyKey was used before by you for this mutation with another input, or its
    first answer cannot be given again; nothing changed. Use a new key."""


@refusal(
    errors.Busy, facts=lambda e: {"retry_after_seconds": int(e.facts.get("retry_after_seconds", 1))}
)
class Busy(Refusal):
    """Others changed the same data at the same moment, again and again; nothing changed. The
    same request again, after retryAfterSeconds, has the effect it asked for."""

    retry_after_seconds: int = strawberry.field(
        description="How many seconds to wait before sending the same request again."
    )


@refusal(workspace_refusals.WorkspaceLimitReached)
class WorkspaceLimitReached(Refusal):
    """The caller's workspace is at one of its limits; nothing changed (docs/workspaces.md)."""

    limit: str | None = strawberry.field(
        description="Which limit: runs (live runs), open_slots, requests_per_minute."
    )
    allowed: int | None = strawberry.field(description="The limit's value.")
    current: int | None = strawberry.field(description="The figure now, at or over the limit.")


#: The refusals of any call with an idempotency key: the key reused, or the data too busy.
Keyed = IdempotencyKeyReused | Busy
#: The refusals every mutation may answer, in the order the payload unions list them.
#: A workspace's limit may bind any change (docs/workspaces.md, "Limits").
Common = InvalidInput | NotAllowed | NotFoundRefusal | WorkspaceLimitReached | Keyed
