"""The frame of typed refusals: the one code enum, typed facts and the base class.

The refusal classes themselves are in :mod:`taskflow.core.refusals` (read them there).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from taskflow import errors

T = TypeVar("T")


class RefusalCode(StrEnum):
    """Why a request did not do what was asked (the GraphQL enum has the same values, in order)."""

    INVALID_INPUT = "INVALID_INPUT"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    NOT_CANDIDATE = "NOT_CANDIDATE"
    ALREADY_CLAIMED = "ALREADY_CLAIMED"
    NOT_HOLDER = "NOT_HOLDER"
    NOT_DELEGATE = "NOT_DELEGATE"
    SLOT_NOT_OPEN = "SLOT_NOT_OPEN"
    STALE_VERSION = "STALE_VERSION"
    PAYLOAD_INVALID = "PAYLOAD_INVALID"
    WRONG_EVENT = "WRONG_EVENT"
    RUN_NOT_ACTIVE = "RUN_NOT_ACTIVE"
    RUN_EXISTS = "RUN_EXISTS"
    MOVE_NOT_ALLOWED = "MOVE_NOT_ALLOWED"
    NO_SLOT_WAITING = "NO_SLOT_WAITING"
    AMBIGUOUS_EVENT = "AMBIGUOUS_EVENT"
    NOT_RAISER = "NOT_RAISER"
    RECIPIENT_NOT_ALLOWED = "RECIPIENT_NOT_ALLOWED"
    NOTHING_TO_CLAIM = "NOTHING_TO_CLAIM"
    LINK_UNUSABLE = "LINK_UNUSABLE"
    LINKS_NOT_ALLOWED = "LINKS_NOT_ALLOWED"
    LINK_NOT_REQUESTED = "LINK_NOT_REQUESTED"
    TOO_MANY_REQUESTS = "TOO_MANY_REQUESTS"
    TIMER_NOT_DEAD = "TIMER_NOT_DEAD"
    STEP_NOT_PARKED = "STEP_NOT_PARKED"
    CLOCKS_UNCHANGED = "CLOCKS_UNCHANGED"
    TIMER_SPENT = "TIMER_SPENT"
    LEASE_LOST = "LEASE_LOST"
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    BUSY = "BUSY"
    #: Magic-link pages only (HTML forms); not in the GraphQL enum.
    PAGE_EXPIRED = "PAGE_EXPIRED"


#: Codes only the HTML link pages answer with.
PAGE_ONLY = frozenset({RefusalCode.PAGE_EXPIRED})


def _same(value: Any) -> Any:
    return value


def moment(value: Any) -> datetime:
    """A datetime fact, also when it came back from JSON as ISO text."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def texts(value: Any) -> list[str]:
    return [str(v) for v in value]


class Fact(Generic[T]):
    """A typed fact of a refusal, kept in ``facts`` and read back parsed (``None`` if absent)."""

    def __init__(self, parse: Callable[[Any], T] = _same) -> None:
        self.parse = parse
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> T | None:
        if obj is None:
            return None
        value = obj.facts.get(self.name)
        return None if value is None else self.parse(value)


class Refusal(errors.TaskflowError):
    """Base of every typed refusal; subclasses set ``code`` and may build their message."""

    code: str = "REFUSED"

    def __init__(self, message: str | None = None, **facts: Any) -> None:
        super().__init__(message or self.explain(facts), **facts)

    @classmethod
    def explain(cls, facts: dict[str, Any]) -> str:
        """The message when the raise site gives none (subclasses say more)."""
        return (cls.__doc__ or cls.__name__).strip().splitlines()[0]

    @classmethod
    def fact_names(cls) -> tuple[str, ...]:
        """Names of the typed facts the class declares (its own and its bases')."""
        return tuple(
            name
            for klass in reversed(cls.__mro__)
            for name, value in vars(klass).items()
            if isinstance(value, Fact)
        )
