"""The answers of the work API's mutations: refusals, successes, and the shared steps that
run a verb on a slot or a run and build its success from the answer's ids."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Protocol, TypeVar

import strawberry

from taskflow import errors
from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info, checked
from taskflow.api.graphql.runs.types import RUN, SLOT, RunType, SlotType, Subject
from taskflow.api.graphql.slots.work import resolve_slot
from taskflow.core.access.principals import Principal
from taskflow.core.runs.model import RunView, SlotView
from taskflow.service.access import access
from taskflow.service.runs import runs as run_service


async def slot_now(info: Info, local_id: str) -> SlotType:
    """The slot as it stands now, as the caller may see it."""
    slot = await resolve_slot(info, local_id)
    if slot is None:  # a replayed answer's slot the caller may no longer see
        raise errors.NotFound(f"No Slot has the id {local_id!r} that you may see now.")
    return slot


Refusals = (
    r.NotCandidate
    | r.AlreadyClaimed
    | r.NotHolder
    | r.NotDelegate
    | r.SlotNotOpen
    | r.StaleVersion
    | r.PayloadInvalid
    | r.WrongEvent
    | r.RunNotActive
    | r.SubjectGone
    | r.MoveNotAllowed
    | r.OnLeave
    | relay.Common
)


# -- successes ---------------------------------------------------------------------------------


@strawberry.type(description="The run was started, or returned again for the same idempotency key.")
class StartRunSuccess:
    run: RunType = strawberry.field(description="The run (after waitFor: as it stands then).")
    created: bool = strawberry.field(description="False when an earlier start is returned again.")
    reached: bool | None = strawberry.field(
        default=None,
        description="With waitFor: whether the run got there within timeoutSeconds (false: "
        "the run as it stood when the wait ended). Null without waitFor.",
    )


@strawberry.type(description="The subject was updated; its live runs re-checked their rules.")
class UpdateSubjectSuccess:
    subject: Subject = strawberry.field(description="The subject as stored.")
    runs: list[RunType] = strawberry.field(description="Its live runs, as they stand now.")


@strawberry.type(
    description="The subject was created or updated; a new subject of a type a workflow owns "
    "started that workflow's run."
)
class UpsertSubjectSuccess:
    subject: Subject = strawberry.field(
        description="The subject as stored (with the owning run's state under the owned field)."
    )
    runs: list[RunType] = strawberry.field(
        description="Its live runs, as they stand now (with the run this upsert started)."
    )
    started: RunType | None = strawberry.field(
        description="The owning workflow's run this upsert started; null when it started none "
        "(the subject has had one, or no workflow owns its type)."
    )


@strawberry.type(description="The event completed a slot.")
class RaiseEventSuccess:
    run: RunType = strawberry.field(description="The run, as it stands now.")
    slot: SlotType = strawberry.field(description="The slot the event completed.")
    duplicate: bool = strawberry.field(description="True when an earlier raise is returned again.")


@strawberry.type(
    description="No slot waited for the event, and its workflow buffers it: the run keeps it "
    "and delivers it, in arrival order, to the first matching slot that opens before it expires "
    "(timeline: event.buffered, then event.delivered or event.expired)."
)
class RaiseEventBuffered:
    run: RunType = strawberry.field(description="The run that keeps the event.")
    # Nullable like the refusals' ``event``, so one selection can ask both (never null here).
    event: str | None = strawberry.field(description="The event kept (always given).")
    arrived_at: datetime = strawberry.field(description="When it arrived.")
    expires_at: datetime = strawberry.field(
        description="When it is dropped if no matching slot has opened by then."
    )
    duplicate: bool = strawberry.field(
        description="True when an earlier raise with the same idempotency key is returned again."
    )


@strawberry.type(description="The slot changed hands (claimed, released or assigned).")
class SlotSuccess:
    slot: SlotType = strawberry.field(description="The slot as it stands now.")


@strawberry.type(description="The slot was completed.")
class CompleteSuccess:
    slot: SlotType = strawberry.field(description="The completed slot.")
    run: RunType = strawberry.field(description="The run, as it stands now.")


@strawberry.type(description="The run moved or was cancelled.")
class RunSuccess:
    run: RunType = strawberry.field(description="The run, as it stands now.")


# -- the shared steps ----------------------------------------------------------------------------


class _NamesSlot(Protocol):
    @property
    def slot_id(self) -> str: ...


class _NamesRun(Protocol):
    @property
    def run_id(self) -> str: ...


class Viewed(Protocol):
    """What a run verb of the service returns: a row with the run's view."""

    @property
    def view(self) -> RunView: ...


OnSlot = TypeVar("OnSlot", bound=_NamesSlot)
OnRun = TypeVar("OnRun", bound=_NamesRun)
#: A slot verb as a mutation's method: (self, info, caller, input, the slot's local id, the
#: request's access cache) -> the slot.
SlotVerb = Callable[[Any, Info, Principal, OnSlot, str, access.RequestAccess], Awaitable[SlotView]]
#: A run verb as a mutation's method: (self, info, caller, input, the run's local id) -> the run.
RunVerb = Callable[[Any, Info, Principal, OnRun, str], Awaitable[Viewed]]


def on_slot(verb: SlotVerb[OnSlot]) -> keyed.InputWork[OnSlot]:
    """The use case of ``verb`` (a ``keyed.mutation``) on the slot ``input.slot_id`` names;
    its success is :data:`slot_success`."""

    @functools.wraps(verb)
    async def work(self: Any, info: Info, me: Principal, input: OnSlot) -> keyed.Answer:
        slot_id = relay.local_id(input.slot_id, SLOT, "slotId")
        slot = await verb(self, info, me, input, slot_id, await checked(info))
        return {"slot": slot.id}

    return work


def on_run(verb: RunVerb[OnRun]) -> keyed.InputWork[OnRun]:
    """The use case of ``verb`` (a ``keyed.mutation``) on the run ``input.run_id`` names; its
    success is :data:`run_success`."""

    @functools.wraps(verb)
    async def work(self: Any, info: Info, me: Principal, input: OnRun) -> keyed.Answer:
        run = await verb(self, info, me, input, relay.local_id(input.run_id, RUN, "runId"))
        return {"run": run.view.id}

    return work


# -- successes from the answers' ids ---------------------------------------------------------------


def _subject(info: Info, answer: keyed.Answer, found: dict[str, Any]) -> Subject:
    """The answer's subject, read with the owning workflow's run among ``found``."""
    kind, external_id, attributes = answer["subject"]
    owner = info.context.services.catalog.owners.get(kind)
    own = [r.view for r in found.values() if owner is not None and r.view.workflow == owner.name]
    if not own:
        return Subject.of(kind, external_id, attributes)
    return Subject.of(kind, external_id, attributes, own[0].workflow, own[0].state)


async def subject_and_runs(info: Info, answer: keyed.Answer) -> tuple[Subject, list[RunType]]:
    """The subject and the runs (as they stand now) an answer of a subject's mutation names
    (``{"subject": [type, external id, attributes], "runs": [ids]}``)."""
    found = await run_service.runs_by_ids(info.context.services, answer["runs"])
    runs = [RunType.of(found[i]) for i in answer["runs"] if i in found]
    return _subject(info, answer, found), runs


async def subject_success(
    info: Info, _: Principal, answer: keyed.Answer, __: bool
) -> UpdateSubjectSuccess:
    subject, runs = await subject_and_runs(info, answer)
    return UpdateSubjectSuccess(subject=subject, runs=runs)


async def upserted(
    info: Info, _: Principal, answer: keyed.Answer, again: bool
) -> UpsertSubjectSuccess:
    owned = [answer["owned"]] if answer.get("owned") else []
    found = await run_service.runs_by_ids(info.context.services, [*answer["runs"], *owned])
    started = answer.get("started")
    return UpsertSubjectSuccess(
        subject=_subject(info, answer, found),
        runs=[RunType.of(found[i]) for i in answer["runs"] if i in found],
        started=RunType.of(found[started]) if started in found and not again else None,
    )


async def raised(
    info: Info, _: Principal, answer: keyed.Answer, again: bool
) -> RaiseEventSuccess | RaiseEventBuffered:
    if "kept" in answer:
        event, arrived_at, expires_at = answer["kept"]
        return RaiseEventBuffered(
            run=await run_now(info, answer["run"]),
            event=event,
            arrived_at=datetime.fromisoformat(arrived_at),
            expires_at=datetime.fromisoformat(expires_at),
            duplicate=again,
        )
    return RaiseEventSuccess(
        run=await run_now(info, answer["run"]),
        slot=await slot_now(info, answer["slot"]),
        duplicate=again,
    )


async def run_now(info: Info, run_id: str) -> RunType:
    """The run as it stands now (a replayed answer shows the run's present state)."""
    found = await run_service.runs_by_ids(info.context.services, [run_id])
    if run_id not in found:
        raise errors.NotFound(f"No Run has the id {run_id!r}.")
    return RunType.of(found[run_id])


def as_object(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise errors.ValidationError(f"{field} must be a JSON object.", field=field)
    return value


def payload_of(value: Any) -> dict[str, Any] | None:
    return as_object(value, "payload") if value is not None else None


slot_success = keyed.built(SlotSuccess, slot=slot_now)
#: ``RunSuccess`` with the run as it stands now (shared with the operator verbs).
run_success = keyed.built(RunSuccess, run=run_now)
completed = keyed.built(CompleteSuccess, slot=slot_now, run=run_now)
