"""Typed refusals: the expected ways a request is turned down, one class each.

A refusal is a :class:`taskflow.errors.TaskflowError` whose ``code`` is a member of
the one :class:`RefusalCode` enum (shared with the API's GraphQL ``RefusalCode``).
Each class declares its typed facts (:class:`Fact`) and builds its own message from
them when the raise site gives none (starlette's ``HTTPException`` is the model: a
default ``detail`` the caller may override). Nothing is changed when one is raised.

Facts are kept in ``facts`` too, as they always were: a refusal stored under an
idempotency key comes back with JSON facts, and its typed attributes read them back
(``AlreadyClaimed.claimed_at`` is a datetime either way). ``typed_refusals.typed`` turns
an untyped ``TaskflowError(code=...)`` (code not converted yet) into its class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Generic, TypeVar

from taskflow import errors
from taskflow.core.common.refusal_codes import PAGE_ONLY as PAGE_ONLY
from taskflow.core.common.refusal_codes import RefusalCode as RefusalCode

T = TypeVar("T")


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
    """Base of every typed refusal; a subclass names its ``code`` in its header (``code=``)."""

    code: str = "REFUSED"

    def __init_subclass__(cls, code: RefusalCode | None = None, **kwargs: Any) -> None:
        """``class NotHolder(Refusal, code=RefusalCode.NOT_HOLDER)``: the class's code."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code

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


# Bases that only share a fact; they declare no code (``typed_refusals.by_code`` passes them over).


class _StatusFact(Refusal):
    status = Fact(str)

    def __init__(self, message: str | None = None, *, status: str | None, **context: Any):
        super().__init__(message, status=status, **context)


class _HolderFact(Refusal):
    holder = Fact(str)

    def __init__(self, message: str | None = None, *, holder: str | None, **context: Any):
        super().__init__(message, holder=holder, **context)


class _EventFact(Refusal):
    event = Fact(str)

    def __init__(self, message: str | None = None, *, event: str | None, **context: Any):
        super().__init__(message, event=event, **context)


class NotCandidate(Refusal, code=RefusalCode.NOT_CANDIDATE):
    """You are not among the slot's candidates; pick a task offered to you."""

    audience = Fact(str)

    def __init__(self, message: str | None = None, *, audience: str | None, **context: Any):
        super().__init__(message, audience=audience, **context)


class AlreadyCandidate(Refusal, code=RefusalCode.ALREADY_CANDIDATE):
    """The slot already admits who you would add; nothing to add."""

    audience = Fact(str)

    def __init__(self, message: str | None = None, *, audience: str | None, **context: Any):
        super().__init__(message, audience=audience, **context)


class AlreadyClaimed(_HolderFact, code=RefusalCode.ALREADY_CLAIMED):
    """Someone already holds the slot; pick another task or ask a delegate to reassign it."""

    claimed_at = Fact(moment)

    def __init__(
        self,
        message: str | None = None,
        *,
        holder: str | None,
        claimed_at: datetime | None,
        **context: Any,
    ) -> None:
        super().__init__(message, holder=holder, claimed_at=claimed_at, **context)


class NotHolder(_HolderFact, code=RefusalCode.NOT_HOLDER):
    """Only the slot's holder may do this."""


class NotDelegate(Refusal, code=RefusalCode.NOT_DELEGATE):
    """Only the slot's holder or one of its delegates may hand it over."""

    delegates = Fact(str)

    def __init__(self, message: str | None = None, *, delegates: str | None, **context: Any):
        super().__init__(message, delegates=delegates, **context)


class SlotNotOpen(_StatusFact, code=RefusalCode.SLOT_NOT_OPEN):
    """The slot is not open any more: there is nothing to do on it."""


class StaleVersion(Refusal, code=RefusalCode.STALE_VERSION):
    """The slot or run changed since you loaded it; reload it and try again."""

    current_version = Fact(int)
    current_state = Fact(str)

    def __init__(
        self,
        message: str | None = None,
        *,
        current_version: int | None,
        current_state: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(
            message, current_version=current_version, current_state=current_state, **context
        )


class WrongEvent(Refusal, code=RefusalCode.WRONG_EVENT):
    """The slot waits for another event; raise the one it waits for."""

    waits_for = Fact(str)

    def __init__(self, message: str | None = None, *, waits_for: str | None, **context: Any):
        super().__init__(message, waits_for=waits_for, **context)


class RunNotActive(_StatusFact, code=RefusalCode.RUN_NOT_ACTIVE):
    """The run has ended; nothing more can happen on it."""


class SubjectGone(Refusal, code=RefusalCode.SUBJECT_GONE):
    """The subject was deleted (``deleteSubject``): its runs take no further action, and no
    run starts for it again."""


class RunExists(Refusal, code=RefusalCode.RUN_EXISTS):
    """The subject already has a live run of this workflow; use that run."""

    run_id = Fact(str)

    def __init__(self, message: str | None = None, *, run_id: str | None, **context: Any):
        super().__init__(message, run_id=run_id, **context)


class OwnedField(Refusal, code=RefusalCode.OWNED_FIELD):
    """The attribute shows the state of the workflow owning the subject; only its run moves
    it. Leave the field out of the attributes you send."""

    field = Fact(str)
    workflow = Fact(str)

    def __init__(
        self, message: str | None = None, *, field: str | None, workflow: str | None, **context: Any
    ) -> None:
        super().__init__(message, field=field, workflow=workflow, **context)


class MoveNotAllowed(Refusal, code=RefusalCode.MOVE_NOT_ALLOWED):
    """The move may not be made now; see its reasons."""

    reasons = Fact(texts)

    def __init__(
        self, message: str | None = None, *, reasons: Sequence[str] = (), **context: Any
    ) -> None:
        super().__init__(message, reasons=list(reasons), **context)

    @classmethod
    def explain(cls, facts: dict[str, Any]) -> str:
        return "The move is not allowed now: " + "; ".join(facts.get("reasons") or ["refused"])


class NotRaiser(_EventFact, code=RefusalCode.NOT_RAISER):
    """The event's raisers (or the application's grants) do not include you."""

    raisers = Fact(str)

    def __init__(
        self,
        message: str | None = None,
        *,
        event: str | None,
        raisers: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message, event=event, raisers=raisers, **context)


class NoSlotWaiting(_EventFact, code=RefusalCode.NO_SLOT_WAITING):
    """No slot of the target waits for this event now."""


class AmbiguousEvent(Refusal, code=RefusalCode.AMBIGUOUS_EVENT):
    """Several slots wait for the event; narrow the target (slotName, item)."""

    slots = Fact(texts)

    def __init__(
        self, message: str | None = None, *, slots: Sequence[str] = (), **context: Any
    ) -> None:
        super().__init__(message, slots=list(slots), **context)


class NothingToClaim(Refusal, code=RefusalCode.NOTHING_TO_CLAIM):
    """No open slot you may take matches; widen the filter or wait."""


class PayloadInvalid(Refusal, code=RefusalCode.PAYLOAD_INVALID):
    """The payload does not fit the slot's fields; see its problems."""

    problems = Fact(list)


class AutomationInvalid(Refusal, code=RefusalCode.AUTOMATION_INVALID):
    """The automation document has problems (docs/automations.md); nothing was saved."""

    #: ``{pointer, code, message}`` each: where (a JSON pointer), what kind, in words.
    problems = Fact(list)


# -- magic links ---------------------------------------------------------------------------------


class LinkUnusable(Refusal, code=RefusalCode.LINK_UNUSABLE):
    """The link cannot be used; to outsiders it says nothing about why."""


class RecipientNotAllowed(Refusal, code=RefusalCode.RECIPIENT_NOT_ALLOWED):
    """The recipient is neither a candidate (``email:`` key) nor admitted by ``outsiders``."""


class LinksNotAllowed(Refusal, code=RefusalCode.LINKS_NOT_ALLOWED):
    """The slot's definition does not let a magic link complete it."""


class LinkNotRequested(Refusal, code=RefusalCode.LINK_NOT_REQUESTED):
    """The notification asks for no magic link (not an outsider's, or its reminder has none)."""


class Throttled(Refusal, code=RefusalCode.TOO_MANY_REQUESTS):
    """Too many refused link requests from this client; wait ``retry_after`` seconds."""

    retry_after = Fact(int)

    def __init__(self, message: str | None = None, *, retry_after: int, **context: Any) -> None:
        super().__init__(message, retry_after=retry_after, **context)

    @classmethod
    def explain(cls, facts: dict[str, Any]) -> str:
        return (
            "Too many attempts with links that cannot be used. Wait "
            f"{facts.get('retry_after')} seconds and try again, or contact the person who sent "
            "you the link."
        )


class PageExpired(Refusal, code=RefusalCode.PAGE_EXPIRED):
    """The form's page token is missing, altered, for another link, or too old."""


# -- operators and timers ------------------------------------------------------------------------


class ClocksUnchanged(Refusal, code=RefusalCode.CLOCKS_UNCHANGED):
    """pauseClocks found no running clock, or resumeClocks no paused one."""


class TimerNotDead(_StatusFact, code=RefusalCode.TIMER_NOT_DEAD):
    """Only a dead timer can be retried or discarded."""


class StepNotParked(_StatusFact, code=RefusalCode.STEP_NOT_PARKED):
    """Only a parked automatic step can be retried (``retryStep``)."""


class TimerSpent(_StatusFact, code=RefusalCode.TIMER_SPENT):
    """Only an armed or dead timer can be rescheduled."""


class LeaseLost(Refusal, code=RefusalCode.LEASE_LOST):
    """The notification is not leased to you any more: do not mark it, take again."""


class IdempotencyKeyReused(Refusal, code=RefusalCode.IDEMPOTENCY_KEY_REUSED):
    """The idempotency key was used before by you for this operation with another input."""


class DryRunTooLong(Refusal, code=RefusalCode.DRY_RUN_TOO_LONG):
    """An SLA dry run's timeline is beyond a cap: too many events, too long a span, or too
    many timer firings (docs/sla.md, "SLA dry run")."""

    #: ``events``, ``span_days`` or ``firings``.
    limit = Fact(str)
    allowed = Fact(int)
    asked = Fact(int)


class DryRunEventRefused(Refusal, code=RefusalCode.DRY_RUN_EVENT_REFUSED):
    """An event of an SLA dry run cannot happen at that point of the timeline (the slot is
    not open, the move is not allowed...): its index, kind and the refusal it met."""

    index = Fact(int)
    kind = Fact(str)
    reason = Fact(str)


class OutsideRetention(Refusal, code=RefusalCode.OUTSIDE_RETENTION):
    """The instant is older than the runs kept: ended runs of that time were pruned, so an
    answer would be wrong, not empty. Ask about an instant at or after ``earliest``."""

    retention_days = Fact(int)
    earliest = Fact(datetime.fromisoformat)
