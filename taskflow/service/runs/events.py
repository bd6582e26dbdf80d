"""Events raised on runs: by run id, by subject, or by a correlation key the sender knows.

The event completes the one slot waiting for it (``slotName`` and ``item`` pick
one of several, e.g. a foreach). Who may raise it, in one place
(:func:`check_raiser`):

- the event's ``raisers`` rule, when the workflow declares one, admits the caller
  (admins excepted);
- an application must be granted the event by an integration grant
  (:func:`taskflow.service.access.access.may_raise_as_application`); it completes the
  slot on the sender's behalf, held or not;
- a staff caller obeys the slot's rules exactly as ``complete`` does: a held slot
  only by its holder, an open one only by a candidate.

When no slot waits and the workflow buffers the event, it is kept and delivered
later (:mod:`taskflow.service.runs.buffered`); otherwise ``NO_SLOT_WAITING``. Refusals
about a run the caller may see are written on its timeline. An
``idempotencyKey`` makes a retry return the first result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.definition import audience as au
from taskflow.core.definition import events as ev
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import refusals
from taskflow.core.runs.model import RunView, SlotView
from taskflow.core.runs.statuses import RunStatus
from taskflow.service.access import access
from taskflow.service.clocks import deadlines
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import buffered, decisions, persist
from taskflow.service.runs import runs as run_service
from taskflow.service.runs.runs import definition_for
from taskflow.store.common import db, locks
from taskflow.store.runs import event_buffer as store_buffer
from taskflow.store.runs import runs as rows
from taskflow.store.runs import subjects


@dataclass(frozen=True)
class EventTarget:
    """Where an event goes: one of a run id, a subject, or a correlation key."""

    run_id: str | None = None
    subject_type: str | None = None
    subject_external_id: str | None = None
    correlation_key: str | None = None
    #: Narrow to one slot when several wait for the event (e.g. one per foreach element).
    slot_name: str | None = None
    item: Any = None
    #: The run's version the caller saw (a ``run_id`` target only): STALE_VERSION if it moved.
    expected_version: int | None = None


async def _target_runs(conn: db.Connection, target: EventTarget) -> list[str]:
    given = [
        target.run_id is not None,
        target.subject_type is not None,
        target.correlation_key is not None,
    ]
    if sum(given) != 1:
        raise errors.ValidationError(
            "Give exactly one target: runId, subject {type, externalId}, or correlationKey.",
            field="target",
        )
    if target.run_id is not None:
        return [target.run_id]
    if target.correlation_key is not None:
        return await rows.runs_by_correlation(conn, target.correlation_key)
    subject = await subjects.find(conn, target.subject_type or "", target.subject_external_id or "")
    return await rows.live_runs_of_subject(conn, subject.id) if subject else []


@dataclass(frozen=True)
class Raised:
    """What a raise did: completed ``slot``, or kept the event (``buffered``) for the run."""

    run: rows.RunRow
    slot: SlotView | None
    new: bool
    buffered: store_buffer.Buffered | None = None


def check_raiser(
    actor: Principal, definition: Definition, run: RunView, event: str, started_by: str | None
) -> None:
    """Refuse (``NOT_RAISER``) a caller the event's raisers or the application grants exclude.

    An application (one with an integration grant somewhere) raising an event its grants
    do not name here is refused as such: it may not raise it by candidacy either.
    """
    if (
        actor.is_integration
        and access.may_raise_as_application(actor, definition.name, event, actor.id)
        and not access.may_raise_as_application(actor, definition.name, event, started_by)
    ):
        raise refusals.NotRaiser(
            f"Application {actor.id!r} may not raise {event!r} on this run of "
            f"{definition.name!r}: integrations act only on the runs they started "
            "(docs/access.md); ask the application that started it.",
            event=event,
        )
    if actor.is_integration and not access.may_raise_as_application(
        actor, definition.name, event, started_by
    ):
        raise refusals.NotRaiser(
            f"Application {actor.id!r} is not granted the event {event!r} of "
            f"{definition.name!r}; ask an admin to grant it.",
            event=event,
        )
    if actor.is_admin:
        return
    declared = definition.event(event)
    if not ev.may_raise(declared, access.keys(actor), run.subject):
        assert declared is not None
        assert declared.raisers is not None
        raise refusals.NotRaiser(
            f"You may not raise {event!r} on {definition.name!r}: it is raised by "
            f"{au.describe(declared.raisers)}.",
            event=event,
            raisers=au.describe(declared.raisers),
        )


@retry.retried("raise the event")
async def raise_event(
    services: Services,
    actor: Principal,
    *,
    event: str,
    payload: Mapping[str, Any] | None,
    target: EventTarget,
) -> Raised:
    """Deposit an event in the one slot waiting for it, or keep it when its workflow buffers it.

    A refusal about one run the caller may see is written on that run's timeline.
    """
    about: list[tuple[str, str | None]] = []  # (run, slot) a refusal is about
    if target.expected_version is not None and target.run_id is None:
        raise errors.ValidationError(
            "expectedVersion guards one run: give target.runId with it.", field="expectedVersion"
        )
    try:
        return await _raise(services, actor, event, payload, target, about)
    except (refusals.Refusal, errors.ValidationError) as refusal:
        if len(about) == 1:
            run_id, slot_id = about[0]
            await run_service.record_refusal(
                services, run_id, actor.id, f"raise {event}", refusal, slot_id
            )
        raise


async def _raise(
    services: Services,
    actor: Principal,
    event: str,
    payload: Mapping[str, Any] | None,
    target: EventTarget,
    about: list[tuple[str, str | None]],
) -> Raised:
    async with services.db.transaction() as conn:
        mine = access.keys(actor)
        visible: list[rows.RunRow] = []
        candidates: list[tuple[rows.RunRow, SlotView]] = []
        # Runs are locked in id order (the lock order of docs/architecture.md).
        for run_id in sorted(await _target_runs(conn, target)):
            run = await rows.get_run(conn, run_id, lock=True)
            if run is None or run.view.status != RunStatus.ACTIVE:
                continue
            await locks.lock_live_slots(conn, [run_id])
            slots = await rows.slots_of_run(conn, run_id)
            # An application raises only the events its grants name, on their workflows;
            # anyone else raises as a candidate of a run they may read.
            as_application = access.may_raise_as_application(
                actor, run.view.workflow, event, run.started_by
            )
            if not as_application and not access.can_read_run(actor, slots, run.view.workflow):
                continue
            about.append((run.view.id, None))
            refusals.check_run_version(target.expected_version, run.version, run.view.state)
            about.pop()
            visible.append(run)
            candidates += [
                (run, s)
                for s in buffered.waiting(slots, run.view, event, target.slot_name, target.item)
            ]
        now = services.clock.now()  # once the runs are locked: one instant for the decision
        if len(visible) == 1:
            about.append((visible[0].view.id, None))
        if not candidates:
            return await _keep(services, conn, actor, visible, event, payload, target, now)
        if len(candidates) > 1:
            names = sorted(
                {
                    f"{s.name}[{s.item_index}]" if s.item_index is not None else s.name
                    for _, s in candidates
                }
            )
            raise refusals.AmbiguousEvent(
                f"{len(candidates)} slots wait for {event!r} ({', '.join(names)}); narrow the "
                "target with slotName and item.",
                slots=names,
            )
        run, slot = candidates[0]
        about[:] = [(run.view.id, slot.id)]
        as_application = access.may_raise_as_application(
            actor, run.view.workflow, event, run.started_by
        )
        definition = definition_for(services, run.view)
        check_raiser(actor, definition, run.view, event, run.started_by)
        slots = await deadlines.load_slots(conn, run.view.id)
        # Applications act for the sender; staff obey the holder and candidate rules.
        deposit = decisions.depositing(
            slot.id, event, payload, actor=actor.id, actor_keys=mine, on_behalf=as_application
        )
        result = deposit(definition, run, slots, now)
        await persist.outcome(
            conn, result, now=now, sla=deadlines.sla_of(services, definition, slots, actor.id)
        )
        fresh_run = await rows.get_run(conn, run.view.id)
        fresh_slot = await rows.get_slot(conn, slot.id)
    assert fresh_run is not None
    assert fresh_slot is not None
    return Raised(fresh_run, fresh_slot, new=True)


def _buffers(definition: Definition, event: str) -> bool:
    declared = definition.event(event)
    return declared is not None and declared.buffer is not None


async def _keep(
    services: Services,
    conn: db.Connection,
    actor: Principal,
    visible: list[rows.RunRow],
    event: str,
    payload: Mapping[str, Any] | None,
    target: EventTarget,
    now: datetime,
) -> Raised:
    """No slot waits: keep the event if the one run's workflow buffers it, else refuse."""
    keeping = [(r, d) for r in visible if _buffers(d := definition_for(services, r.view), event)]
    if not keeping:
        raise refusals.NoSlotWaiting(
            f"No slot the target can see waits for the event {event!r} now; check the target "
            "and the event name, or the run has moved on.",
            event=event,
        )
    if len(keeping) > 1:
        names = sorted(f"{d.name} run {r.view.id}" for r, d in keeping)
        raise refusals.AmbiguousEvent(
            f"{len(keeping)} runs would keep {event!r} ({', '.join(names)}); target one run.",
            slots=names,
        )
    run, definition = keeping[0]
    check_raiser(actor, definition, run.view, event, run.started_by)
    declared = definition.event(event)
    as_application = access.may_raise_as_application(actor, definition.name, event, run.started_by)
    if not as_application and (declared is None or declared.raisers is None):
        # Staff are admitted by a slot's candidates; with no slot open, only raisers can.
        raise refusals.NoSlotWaiting(
            f"No slot waits for {event!r} now, and only applications or the event's declared "
            "raisers may send it early; raise it once the slot is open.",
            event=event,
        )
    kept = await buffered.keep(
        conn,
        definition,
        run.view,
        event=event,
        payload=payload,
        slot_name=target.slot_name,
        item=target.item,
        actor=actor.id,
        now=now,
    )
    fresh = await rows.get_run(conn, run.view.id)
    assert fresh is not None
    return Raised(fresh, None, new=True, buffered=kept)
