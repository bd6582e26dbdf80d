"""Typed refusals in GraphQL: one type per refusal class, chosen by a table.

A use case raises a refusal class (``taskflow.core.common.refusals``, or one of the
``taskflow.errors`` children a client can mend: invalid input, not found, forbidden,
busy); each GraphQL refusal type is declared with the classes it answers
(``@refusal(core.NotHolder)``, see ``refused``), which fills :data:`TABLE` (the nearest
class in the error's MRO wins). An untyped ``TaskflowError(code=...)`` is first made
typed by its code (``typed_refusals.typed``). Internal errors (``errors.InternalError``,
e.g. the engine's) are never refusals: :func:`refusal_for` raises them again and the
schema's error shaping masks them with the request id.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry

from taskflow import errors
from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.enums import TimerState, state_of
from taskflow.api.graphql.common.refused import TABLE as TABLE
from taskflow.api.graphql.common.refused import Refusal, refusal
from taskflow.core.access import working_hours
from taskflow.core.common import refusals as core
from taskflow.core.common import typed_refusals
from taskflow.core.definition.fields import PayloadError
from taskflow.core.files import files as fi
from taskflow.core.workspaces import refusals as workspace_refusals


@refusal(core.NotCandidate)
class NotCandidate(Refusal):
    """The caller is not among the slot's candidates."""

    audience: str | None = strawberry.field(description="Who the slot is for, in words.")


# Bases that only share fact fields; the schema never names them.
@strawberry.type
class _HolderFact(Refusal):
    holder: str | None = strawberry.field(description="The login of the holder.")


@strawberry.type
class _EventFact(Refusal):
    event: str | None = strawberry.field(description="The event raised.")


@strawberry.type
class _TimerStateFact(Refusal):
    state: TimerState | None = strawberry.field(description="The timer's state now.")


def _timer_state(e: core.TimerSpent | core.TimerNotDead) -> dict[str, Any]:
    """A timer refusal's facts: its status as the API's timer state."""
    return {"state": state_of(e.status)}


@refusal(core.AlreadyCandidate)
class AlreadyCandidate(Refusal):
    """The slot already admits the principal or role to add."""

    audience: str | None = strawberry.field(description="Who the slot is for, in words.")


@refusal(core.AlreadyClaimed)
class AlreadyClaimed(_HolderFact):
    """Someone already holds the slot."""

    claimed_at: datetime | None = strawberry.field(description="When they claimed it.")


@refusal(working_hours.OnLeave)
class OnLeave(Refusal):
    """The principal is on leave now (assign with force: true hands it over anyway)."""

    principal: str | None = strawberry.field(description="The login of the absent principal.")
    leave_from: datetime | None = strawberry.field(description="When their leave started.")
    leave_to: datetime | None = strawberry.field(description="When it ends.")


@refusal(core.NotHolder)
class NotHolder(_HolderFact):
    """Only the holder may do this."""


@refusal(core.NotDelegate)
class NotDelegate(Refusal):
    """Only the holder or a delegate may hand the slot over."""

    delegates: str | None = strawberry.field(description="Who the delegates are, in words.")


@refusal(core.SlotNotOpen)
class SlotNotOpen(Refusal):
    """The slot is not open any more."""

    status: str | None = strawberry.field(description="The slot's status now.")


@refusal(core.StaleVersion)
class StaleVersion(Refusal):
    """The slot or run changed since the caller loaded it."""

    current_version: int | None = strawberry.field(
        description="The slot's version now (the run's, for move and cancelRun)."
    )
    current_state: str | None = strawberry.field(
        default=None,
        description="For move and cancelRun: the state the run is in now (null for slots).",
    )


@strawberry.type(description="One field of a payload and why it was refused.")
class FieldProblem:
    field: str = strawberry.field(description="The payload field.")
    reason: str = strawberry.field(description="What is wrong with it.")


def _problems(e: errors.TaskflowError) -> dict[str, Any]:
    return {"problems": [relay.copied(FieldProblem, p) for p in e.facts["problems"]]}


@refusal(core.PayloadInvalid, PayloadError, facts=_problems)
class PayloadInvalid(Refusal):
    """The payload does not fit the slot's fields."""

    problems: list[FieldProblem] = strawberry.field(description="Every field at fault.")


@refusal(core.WrongEvent)
class WrongEvent(Refusal):
    """The slot waits for another event."""

    waits_for: str | None = strawberry.field(description="The event the slot waits for.")


@refusal(core.RunNotActive)
class RunNotActive(Refusal):
    """The run has ended."""

    status: str | None = strawberry.field(description="The run's status.")


@refusal(core.SubjectGone)
class SubjectGone(Refusal):
    """The subject was deleted: its runs take no further action, none starts for it again."""


@refusal(core.RunExists, facts=lambda e: {"run_id": relay.node_id("Run", e.run_id)})
class RunExists(Refusal):
    """The subject already has a live run of this workflow."""

    run_id: strawberry.ID | None = strawberry.field(description="Global id of the live run.")


@refusal(core.OwnedField)
class OwnedField(Refusal):
    """The subject's attribute shows the state of the workflow owning the subject: read-only."""

    field: str | None = strawberry.field(description="The read-only attribute.")
    workflow: str | None = strawberry.field(description="The workflow that owns the subject.")


@refusal(core.MoveNotAllowed, facts=lambda e: {"reasons": e.reasons or []})
class MoveNotAllowed(Refusal):
    """The move may not be made now."""

    reasons: list[str] = strawberry.field(description="Each reason, in words.")


@refusal(core.NoSlotWaiting)
class NoSlotWaiting(_EventFact):
    """No slot of the target waits for this event now."""


@refusal(core.AmbiguousEvent, facts=lambda e: {"slots": e.slots or []})
class AmbiguousEvent(Refusal):
    """Several slots wait for the event; narrow the target."""

    slots: list[str] = strawberry.field(description="The waiting slots, as name[index].")


@refusal(core.NotRaiser)
class NotRaiser(_EventFact):
    """The event's raisers (or the application's grants) do not include the caller."""

    raisers: str | None = strawberry.field(
        description="Who may raise it, in words (null when an application's grant is missing)."
    )


@refusal(core.NothingToClaim)
class NothingToClaim(Refusal):
    """No open slot the caller may take matches."""


@refusal(core.LinkUnusable)
class LinkUnusable(Refusal):
    """The link cannot be used (whatever the reason; staff see it)."""


@refusal(core.LinksNotAllowed)
class LinksNotAllowed(Refusal):
    """The slot's definition does not let a magic link complete it."""


@refusal(core.RecipientNotAllowed)
class RecipientNotAllowed(Refusal):
    """The recipient is not among the slot's candidates (e-mail addresses) and its outsiders
    rule does not admit them either."""


@refusal(core.Throttled, facts=lambda e: {"retry_after_seconds": e.retry_after or 60})
class TooManyRequests(Refusal):
    """Too many unusable links from this client; wait, then try again."""

    retry_after_seconds: int = strawberry.field(description="Seconds to wait before trying.")


@refusal(core.LinkNotRequested)
class LinkNotRequested(Refusal):
    """The notification requests no magic link."""


@refusal(core.ClocksUnchanged)
class ClocksUnchanged(Refusal):
    """pauseClocks found no running clock, or resumeClocks no paused one."""


@refusal(core.TimerSpent, facts=_timer_state)
class TimerSpent(_TimerStateFact):
    """Only an armed or dead timer can be rescheduled."""


@refusal(core.TimerNotDead, facts=_timer_state)
class TimerNotDead(_TimerStateFact):
    """Only a dead timer can be retried or discarded."""


@refusal(core.LeaseLost)
class LeaseLost(Refusal):
    """The notification is not leased to the caller any more."""


@refusal(core.OutsideRetention)
class OutsideRetention(Refusal):
    """The instant is older than the runs kept; ask about a later one."""

    retention_days: int = strawberry.field(description="How long ended runs are kept.")
    earliest: datetime = strawberry.field(description="The earliest instant answered.")


@refusal(core.StepNotParked)
class StepNotParked(Refusal):
    """Only a PARKED automatic step can be retried."""

    status: str | None = strawberry.field(description="The step's status now (lower case).")


#: Errors that are never a client's refusal: raised again, then masked (api/graphql/common/errors).
NOT_REFUSALS: tuple[type[errors.TaskflowError], ...] = (
    errors.InternalError,
    errors.AuthenticationError,
    # A storage that does not answer is an outage (UNAVAILABLE, 503), as the database's is.
    fi.StorageUnavailable,
)


def refusal_for(error: errors.TaskflowError) -> Any:
    """The GraphQL refusal (payload union member) of a use case's error; an internal error or
    a failed authentication is raised again (a top-level GraphQL error)."""
    if isinstance(error, NOT_REFUSALS):
        raise error
    found = typed_refusals.typed(error)
    for cls in type(found).__mro__:
        build = TABLE.get(cls)
        if build is not None:
            return build(found)
    raise error  # not reached: TaskflowError is in the table


@refusal(workspace_refusals.WorkspaceUnchanged)
class WorkspaceUnchanged(Refusal):
    """The workspace is in that status already; nothing changed."""

    status: str | None = strawberry.field(description="Its status now: active or suspended.")
