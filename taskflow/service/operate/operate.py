"""Operator verbs: goto, pause and resume a run's clocks, reassign or release what a
principal holds, reschedule a timer.

Each is for admins and the leads and managers granted the run's workflow
(``access.require_operate``), takes a mandatory reason that goes on the run's
timeline with the operator's id, and is one transaction per run that locks the
run row first (then its slots, clocks and timers: the lock order). Run changes
go through :func:`taskflow.service.runs.runs.decide`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.access import working_hours
from taskflow.core.access.principals import Principal
from taskflow.core.clocks.timer_states import TimerStatus
from taskflow.core.common import refusals
from taskflow.core.runs import operator
from taskflow.core.runs.model import CLAIMED, AuditEntry, Outcome
from taskflow.core.slots import slots as core_slots
from taskflow.service.access import access
from taskflow.service.access import principals as principal_service
from taskflow.service.clocks import deadlines
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import decisions, persist
from taskflow.service.runs import runs as run_service
from taskflow.store.clocks import deadlines as timer_rows
from taskflow.store.clocks import timer_admin as timer_store
from taskflow.store.runs import runs as rows
from taskflow.store.slots import held as held_rows
from taskflow.store.slots import queries

#: A guarded slot write misses only when the slot changed meanwhile; read it again this often.
MAX_ATTEMPTS = 5


TimerSpent = refusals.TimerSpent


def _reason(reason: str) -> str:
    if not reason.strip():
        raise errors.ValidationError(
            "Say why (reason): it goes on the run's timeline with your id.", field="reason"
        )
    return reason.strip()


async def _operable(services: Services, actor: Principal, run_id: str) -> rows.RunRow:
    """The run, when the actor may operate on it; NOT_FOUND or FORBIDDEN otherwise."""
    async with services.db.connection() as conn:
        run, _ = await run_service.readable_run(services, conn, actor, run_id)
    access.require_operate(actor, run.view.workflow)
    return run


async def _decided(
    services: Services,
    actor: Principal,
    run_id: str,
    action: str,
    expected_version: int | None,
    reason: str,
    verb: Callable[..., Outcome],
    **facts: Any,
) -> rows.RunRow:
    """Carry out the operator verb ``verb`` (with ``facts``) on the run: the operator's id and
    their reason, required, go on its timeline; a refusal is recorded there as ``action``."""
    decision = decisions.made(verb, reason=_reason(reason), actor=actor.id, **facts)
    await _operable(services, actor, run_id)

    def work() -> Awaitable[rows.RunRow]:
        return run_service.decided(services, run_id, expected_version, decision)

    return await run_service.refusals_recorded(services, run_id, actor.id, action, work)


@retry.retried("move the run")
async def goto(
    services: Services,
    actor: Principal,
    *,
    run_id: str,
    state: str,
    reason: str,
    expected_version: int | None = None,
) -> rows.RunRow:
    """Move a live run to any state of its definition (refused for an ended run)."""
    return await _decided(
        services,
        actor,
        run_id,
        f"goto {state}",
        expected_version,
        reason,
        operator.goto,
        target=state,
    )


async def _hand_on_clocks(
    services: Services,
    actor: Principal,
    run_id: str,
    reason: str,
    expected_version: int | None,
    *,
    pause: bool,
) -> rows.RunRow:
    action = "pauseClocks" if pause else "resumeClocks"
    verb = operator.pause_clocks if pause else operator.resume_clocks
    return await _decided(services, actor, run_id, action, expected_version, reason, verb)


@retry.retried("pause the clocks")
async def pause_clocks(
    services: Services,
    actor: Principal,
    *,
    run_id: str,
    reason: str,
    expected_version: int | None = None,
) -> rows.RunRow:
    """Pause the running clocks of the run's current slots by hand."""
    return await _hand_on_clocks(services, actor, run_id, reason, expected_version, pause=True)


@retry.retried("resume the clocks")
async def resume_clocks(
    services: Services,
    actor: Principal,
    *,
    run_id: str,
    reason: str,
    expected_version: int | None = None,
) -> rows.RunRow:
    """Resume the paused clocks of the run's current slots."""
    return await _hand_on_clocks(services, actor, run_id, reason, expected_version, pause=False)


# -- what a principal holds ----------------------------------------------------------------------


@dataclass(frozen=True)
class Reassigned:
    """What reassignHeld did (or, on a dry run, would do)."""

    #: Slots the principal holds in workflows the operator may operate.
    held: int
    #: Slots moved (released, or assigned to the target).
    moved: list[str]
    #: Slots left where they are: the target is not a candidate for them.
    skipped: list[str]
    dry_run: bool


@retry.retried("reassign held slots")
async def reassign_held(
    services: Services,
    actor: Principal,
    *,
    principal_id: str,
    to: str | None,
    reason: str,
    dry_run: bool,
    force: bool = False,
) -> Reassigned:
    """Hand every slot ``principal_id`` holds (where the actor may operate) to ``to``, or
    release them to the pool (``to`` null); ``dry_run`` counts without changing anything.
    A ``to`` on leave now is refused (``OnLeave``, nothing moves) unless ``force``."""
    why = _reason(reason)
    workflows = access.operate_workflows(actor, "reassign held work")
    holder = await principal_service.get(services, principal_id)
    if holder is None:
        raise errors.NotFound(f"No principal has the id {principal_id!r}.", field="principalId")
    target = await principal_service.get(services, to) if to is not None else None
    if to is not None and (target is None or not target.active):
        raise errors.ValidationError(
            f"There is no active principal {to!r} to hand the work to.", field="to"
        )
    if target is not None:
        working_hours.require_present(target.id, target.leave, services.clock.now(), force)
    async with services.db.connection() as conn:
        held = await held_rows.held_slots(conn, holder.id, workflows)
    theirs = access.keys(target) if target is not None else frozenset()
    fits = [s for s in held if target is None or core_slots.is_candidate(s, theirs)]
    skipped = [s.id for s in held if s not in fits]
    if dry_run:
        return Reassigned(len(held), [s.id for s in fits], skipped, True)
    moved: list[str] = []
    for slot in fits:
        if await _move_one(services, actor, holder, target, slot.id, why):
            moved.append(slot.id)
    return Reassigned(len(held), moved, skipped, False)


async def _move_one(
    services: Services,
    actor: Principal,
    holder: Principal,
    target: Principal | None,
    slot_id: str,
    reason: str,
) -> bool:
    """Release or assign one slot as its holder would, with the operator on the timeline."""
    keys = access.keys(holder)
    for _ in range(MAX_ATTEMPTS):
        now = services.clock.now()
        async with services.db.transaction() as conn:
            slot = await rows.get_slot(conn, slot_id)
            if slot is None or slot.status != CLAIMED or slot.holder != holder.id:
                return False
            if target is None:
                after = core_slots.release(slot, holder.id, keys, now)
                line = AuditEntry(
                    "slot.released",
                    now,
                    actor.id,
                    slot.id,
                    reason,
                    {"slot": slot.name, "previous_holder": holder.id, "by": "reassignHeld"},
                )
            else:
                after = core_slots.assign(
                    slot, holder.id, keys, target.id, access.keys(target), now, None
                )
                line = AuditEntry(
                    "slot.assigned",
                    now,
                    actor.id,
                    slot.id,
                    reason,
                    {
                        "slot": slot.name,
                        "to": target.id,
                        "previous_holder": holder.id,
                        "by": "reassignHeld",
                    },
                )
            written = await queries.write_slot_move(conn, slot, after, now)
            if written is not None:
                await deadlines.after_slot_move(services, conn, written, now, actor.id, [line])
                return True
    return False


# -- timers --------------------------------------------------------------------------------------


@retry.retried("reschedule the timer")
async def reschedule_timer(
    services: Services, actor: Principal, *, timer_id: int, due_at: datetime, reason: str
) -> timer_rows.TimerRow:
    """Make an armed or dead timer due at ``due_at`` (armed, its failures forgotten)."""
    why = _reason(reason)
    if due_at.tzinfo is None:
        raise errors.ValidationError("dueAt needs a time zone offset.", field="dueAt")
    access.operate_workflows(actor, "reschedule timers")
    now = services.clock.now()
    async with services.db.transaction() as conn:
        workflow = await timer_store.workflow_of(conn, timer_id)
        found = await timer_store.lock(conn, timer_id)
        if found is None or workflow is None or not access.may_operate(actor, workflow):
            raise errors.NotFound(f"No timer has the id {timer_id}.", field="timerId")
        if found.status not in (TimerStatus.ARMED, TimerStatus.DEAD):
            raise TimerSpent(
                f"The timer is {found.status}: only an armed or dead timer can be rescheduled "
                "(a fired, cancelled or discarded one is over).",
                status=found.status,
            )
        timer = await timer_store.reschedule(conn, timer_id, due_at, now)
        line = AuditEntry(
            "timer.rescheduled",
            now,
            actor.id,
            found.slot_id,
            why,
            {
                "key": found.key,
                "kind": found.kind,
                "from": found.due_at.isoformat(),
                "to": due_at.isoformat(),
                "status": str(found.status),
            },
        )
        await persist.audit(conn, found.run_id, line)
    return timer
