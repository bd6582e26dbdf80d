"""Slot use cases: claim, claim next, release, assign, complete.

Claim, release and assign touch one slot: the core decides on the slot as
read, and one guarded UPDATE (same status, same version) applies it. Like
every writer they take the run's row lock first (the lock order of
docs/architecture.md), so two people acting on one slot go in turn: the second
is decided on what the first left, and told why it is refused (already claimed
by whom, stale copy...). Every use case runs through :mod:`retry`: a deadlock
or serialization failure PostgreSQL still reports is retried, then BUSY.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.access import working_hours
from taskflow.core.access.principals import Principal
from taskflow.core.runs import refusals
from taskflow.core.runs.model import AuditEntry, SlotView
from taskflow.core.slots import filters
from taskflow.core.slots import slots as core
from taskflow.service.access import access, callers
from taskflow.service.access import principals as principal_service
from taskflow.service.clocks import deadlines
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.reports import metrics
from taskflow.service.runs import decisions
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import views
from taskflow.store.common import locks
from taskflow.store.runs import runs as rows
from taskflow.store.slots import claims, queries


async def _guarded(
    services: Services,
    actor: Principal,
    slot_id: str,
    action: str,
    decide: Callable[[SlotView, datetime], SlotView],
    audit: Callable[[SlotView, SlotView, datetime], AuditEntry],
    request: access.RequestAccess | None = None,
) -> SlotView:
    """Move a slot by one guarded statement; ``request`` (the caller's per-request access
    cache) is told the slot and run the statement returned, to answer from."""
    slot = await views.visible_slot(services, actor, slot_id)

    async def work() -> SlotView:
        async with services.db.transaction() as conn:
            # The lock order (docs/architecture.md): the run's row first, then the slot, read
            # with its lock: it stays as read until this transaction ends.
            await locks.lock_run(conn, slot.run_id)
            now = services.clock.now()
            current = await rows.get_slot(conn, slot_id, lock=True)
            if current is None:
                raise errors.NotFound(f"No slot has the id {slot_id!r}.")
            after = decide(current, now)
            written = await queries.write_slot_move(conn, current, after, now)
            if written is None:
                raise retry.busy(action)
            # The line carries the instant the move was decided at, which the slot's
            # held facts folded in: the timeline and the facts agree to the µs.
            line = audit(current, written.slot, now)
            await deadlines.after_slot_move(services, conn, written, now, actor.id, lines=[line])
        if request is not None:
            request.saw(written.slot, written.run.head)
        return written.slot

    return await run_service.refusals_recorded(
        services, slot.run_id, actor.id, action, work, slot_id=slot_id
    )


@retry.retried("claim")
async def claim(
    services: Services,
    actor: Principal,
    slot_id: str,
    expected_version: int | None,
    request: access.RequestAccess | None = None,
) -> SlotView:
    """Take an open slot for yourself."""
    mine = access.keys(actor)
    first = [expected_version]

    def decide(slot: SlotView, now: datetime) -> SlotView:
        # The caller's version is checked on the first read only; a re-read after a miss
        # is ours, and explains the miss through the status check.
        expected, first[0] = first[0], None
        return core.claim(slot, actor.id, mine, now, expected)

    claimed = await _guarded(
        services,
        actor,
        slot_id,
        "claim",
        decide,
        lambda before, after, now: AuditEntry(
            "slot.claimed",
            after.claimed_at or now,
            actor.id,
            after.id,
            None,
            {"slot": after.name},
        ),
        request=request,
    )
    metrics.claimed("claim")
    return claimed


@retry.retried("release")
async def release(
    services: Services,
    actor: Principal,
    slot_id: str,
    reason: str | None,
    request: access.RequestAccess | None = None,
    expected_version: int | None = None,
) -> SlotView:
    """Put a claimed slot back in the pool (holder or delegate)."""
    mine = access.keys(actor)
    first = [expected_version]

    def decide(slot: SlotView, now: datetime) -> SlotView:
        expected, first[0] = first[0], None
        return core.release(slot, actor.id, mine, now, expected)

    return await _guarded(
        services,
        actor,
        slot_id,
        "release",
        decide,
        lambda before, after, now: AuditEntry(
            "slot.released",
            now,
            actor.id,
            after.id,
            reason,
            {"slot": after.name, "previous_holder": before.holder},
        ),
        request=request,
    )


@retry.retried("assign")
async def assign(
    services: Services,
    actor: Principal,
    slot_id: str,
    to: str,
    expected_version: int | None,
    reason: str | None,
    request: access.RequestAccess | None = None,
    *,
    force: bool = False,
) -> SlotView:
    """Hand a slot to a named principal (by its holder or a delegate); one on leave now
    is refused (``OnLeave``) unless ``force``."""
    target = await principal_service.get(services, to)
    if target is None or not target.active:
        raise errors.ValidationError(
            f"There is no active principal {to!r} to assign the slot to.", field="to"
        )
    working_hours.require_present(target.id, target.leave, services.clock.now(), force)
    mine, theirs = access.keys(actor), access.keys(target)
    first = [expected_version]

    def decide(slot: SlotView, now: datetime) -> SlotView:
        expected, first[0] = first[0], None
        return core.assign(slot, actor.id, mine, target.id, theirs, now, expected)

    return await _guarded(
        services,
        actor,
        slot_id,
        "assign",
        decide,
        lambda before, after, now: AuditEntry(
            "slot.assigned",
            now,
            actor.id,
            after.id,
            reason,
            {"slot": after.name, "to": target.id, "previous_holder": before.holder},
        ),
        request=request,
    )


@retry.retried("claim next")
async def claim_next(
    services: Services,
    actor: Principal,
    f: filters.SlotFilter,
    request: access.RequestAccess | None = None,
    caller_digest: str | None = None,
) -> SlotView:
    """Take the most urgent open slot the actor may take (``request``: the caller's
    per-request access cache, told the slot and run the claim statement returned).

    One autocommitted statement claims a plain slot with its deadlines (the common
    case, ``store/slots/claims.py``); a slot that is not plain (among them one whose
    calendar chain asks the holder) goes the general way: claim, plan the deadlines in
    Python (the holder's calendar read), write them, in one transaction. ``caller_digest``: the
    actor is presumed (``service/access/callers.py``); when the statement finds nothing to claim
    for it, :class:`callers.CallerChanged` (authenticate, then claim again without it).
    """
    keys = sorted(access.keys(actor))
    now = services.clock.now()
    async with services.db.single() as conn:
        plain = await claims.claim_next_plain(
            conn,
            principal_id=actor.id,
            keys=keys,
            f=f,
            now=now,
            facts=services.catalog.claim_facts,
            caller_digest=caller_digest,
            workspace=actor.workspace,
        )
    if plain is None and caller_digest is not None:
        raise callers.CallerChanged
    if plain is not None and plain.slot is not None:
        metrics.claimed("claim_next")
        if request is not None and plain.run is not None:
            request.saw(plain.slot, plain.run)
        return plain.slot
    claimed = None
    if plain is not None:
        async with services.db.transaction() as conn:
            claimed = await claims.claim_next(conn, principal_id=actor.id, keys=keys, f=f, now=now)
            if claimed is not None:
                # The statement's own instant (never before the slot opened): its deadlines too.
                at = claimed.slot.claimed_at or now
                await deadlines.after_slot_move(services, conn, claimed, at, actor.id)
    if claimed is None:
        raise refusals.NothingToClaim(
            "There is no open slot you may take right now"
            + (" that matches the filter" if f != filters.SlotFilter() else "")
            + "; check your inbox later."
        )
    metrics.claimed("claim_next")
    if request is not None:
        request.saw(claimed.slot, claimed.run.head)
    return claimed.slot


@retry.retried("complete")
async def complete(
    services: Services,
    actor: Principal,
    slot_id: str,
    *,
    event: str | None,
    payload: Mapping[str, Any] | None,
    expected_version: int | None,
) -> tuple[SlotView, rows.RunRow]:
    """Deposit the slot's event with its payload; the run advances in the same transaction."""
    slot = await views.visible_slot(services, actor, slot_id)
    mine = access.keys(actor)

    async def work() -> tuple[SlotView, rows.RunRow]:
        async with services.db.transaction() as conn:
            await run_service.decide(
                services,
                conn,
                slot.run_id,
                decisions.depositing(
                    slot_id,
                    event,
                    payload,
                    actor=actor.id,
                    actor_keys=mine,
                    expected_version=expected_version,
                ),
            )
            done = await rows.get_slot(conn, slot_id)
            run = await rows.get_run(conn, slot.run_id)
        assert done is not None
        assert run is not None
        return done, run

    done, run = await run_service.refusals_recorded(
        services, slot.run_id, actor.id, "complete", work, slot_id=slot_id
    )
    metrics.completed("staff")
    return done, run
