"""The engine: given a run, its slots, a happening and ``now``, decide what changes.

Every entry point returns an :class:`~taskflow.core.runs.model.Outcome` (the
run as it becomes, the slots created and changed, the timeline lines) or raises
a refusal, having changed nothing. After every happening the current state's
completion rule is re-checked and routes are taken (:func:`.states.settle`);
a pausing state holds the state it came from (:mod:`.pausing`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from taskflow.core.clocks import calendars, deadlines, expiry, run_deadline
from taskflow.core.definition import actors, fields, runtime
from taskflow.core.definition import audience as au
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import opening, pausing, refusals, states, statuses
from taskflow.core.runs.decision import Decision, NewId
from taskflow.core.runs.model import (
    ACTIVE,
    CANCELLED,
    OPEN,
    PENDING,
    RUN_CANCELLED,
    SATISFIED,
    Outcome,
    RunView,
    SlotView,
)
from taskflow.core.slots import holding
from taskflow.core.slots import slots as slot_moves


def start(
    definition: Definition,
    *,
    run_id: str,
    subject: Mapping[str, Any],
    now: datetime,
    actor: actors.Acting,
    new_id: NewId,
) -> Outcome:
    """A new run in the initial state, its slots opened and its completion settled."""
    initial = definition.initial_state.name
    # A date an expiring slot reads must parse: refused here, before anything is written.
    expiry.check_subject(definition, initial, subject)
    run = RunView(
        id=run_id,
        workflow=definition.name,
        definition_version=definition.version,
        state=initial,
        status=ACTIVE,
        visit=0,
        subject=dict(subject),
        state_entered_at=now,
        started_at=now,
    )
    run_deadline.check_subject(definition, subject)
    decision = Decision(definition, run, (), now=now, actor=actor, new_id=new_id)
    decision.log("run.started", workflow=definition.name, version=definition.version)
    states.enter(decision, initial, reason="the run started", via="start")
    states.settle(decision)
    return decision.outcome()


def deposit(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    slot_id: str,
    event: str | None,
    payload: Mapping[str, Any] | None,
    actor: str,
    actor_keys: frozenset[str],
    expected_version: int | None,
    now: datetime,
    new_id: NewId,
    on_behalf: bool = False,
) -> Outcome:
    """Complete a slot with its event's payload, then settle.

    ``on_behalf`` is for deposits the caller was authorised for elsewhere (an
    application raising an event, a magic link): candidacy is not checked.
    """
    acting = actors.with_keys(actor, actor_keys)
    decision = Decision(definition, run, slots, now=now, actor=acting, new_id=new_id)
    decision.require_active()
    view = decision.slots.get(slot_id)
    if view is None or view.visit != run.visit:
        raise refusals.SlotNotOpen(
            "The slot belongs to a state the run has left; it can no longer be completed.",
            status=view.status if view else CANCELLED,
        )
    if on_behalf:
        slot_moves.check_version(view, expected_version)
        if not statuses.allows(view.status, statuses.SlotMove.COMPLETE):
            raise refusals.SlotNotOpen(
                f"The slot is {view.status}, not open: it can no longer be completed.",
                status=view.status,
            )
    else:
        slot_moves.check_may_complete(view, actor, actor_keys, event, expected_version)
    declared = definition.slot(run.state, view.name)
    cleaned = fields.validate_payload(declared.fields, payload)
    done = dataclasses.replace(
        view,
        status=SATISFIED,
        payload=cleaned,
        holder=view.holder or actor,
        satisfied_at=now,
        satisfied_by=actor,
        version=view.version + 1,
    )
    decision.put(holding.moved(done, "slot.satisfied", now))
    decision.log(
        "slot.satisfied", slot_id=view.id, slot=view.name, event=view.waits_for, payload=cleaned
    )
    states.settle(decision)
    return decision.outcome()


def change_subject(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    subject: Mapping[str, Any],
    now: datetime,
    actor: actors.Acting,
    new_id: NewId,
    registry: calendars.Registry | None = None,
) -> Outcome:
    """The subject changed: re-arm or disarm slots, refresh audiences and labels, settle;
    the run's deadline moves with it (a ``run.deadline_moved`` line, given the calendars)."""
    decision = Decision(definition, run, slots, now=now, actor=actor, new_id=new_id)
    if run.status != ACTIVE:
        decision.set_run(subject=dict(subject))
        return decision.outcome()
    run_deadline.check_subject(definition, subject)
    expiry.check_subject(definition, run.state, subject)
    before = run.subject
    changed = sorted(k for k in set(before) | set(subject) if before.get(k) != subject.get(k))
    decision.set_run(subject=dict(subject))
    decision.log("subject.updated", changed=changed)
    moved = registry is not None and run_deadline.moved(definition, run, decision.run, registry)
    if moved:
        decision.log(run_deadline.MOVED, reason=run_deadline.MOVED_REASON, **moved)
    for view in list(decision.slots.values()):
        if view.live and view.clocks:
            rebudgeted = deadlines.rebudget(definition, view, subject, now)
            if rebudgeted is not view:
                decision.put(dataclasses.replace(rebudgeted, version=view.version + 1))
    state = decision.state
    env = ex.Env(subject=subject)
    for slot in state.slots:
        instances = [v for v in decision.current() if v.name == slot.name]
        armed = runtime.is_armed(slot, env)
        if not armed:
            decision.cancel_slots(
                instances, reason="its armed condition no longer holds", kind="slot.disarmed"
            )
            continue
        if not instances:
            states.open_slot(decision, state, slot)
            continue
        for view in instances:
            if view.status in (OPEN, PENDING):
                item = opening.item_of(view)
                refreshed = dataclasses.replace(
                    view,
                    audience=opening.audience_for(slot, subject, item),
                    delegates=opening.delegates_for(slot, subject, item),
                    label=opening.label_for(slot, subject, item, decision.run.results),
                )
                if refreshed != view:
                    decision.put(dataclasses.replace(refreshed, version=view.version + 1))
    states.settle(decision)
    return decision.outcome()


def move(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    name: str,
    data: Mapping[str, Any] | None,
    principal: Any,
    now: datetime,
    new_id: NewId,
) -> Outcome:
    """Make the named manual move, if its guard, checklist and ``by`` allow it."""
    acting = actors.principal(principal) if principal is not None else None
    decision = Decision(definition, run, slots, now=now, actor=acting, new_id=new_id)
    decision.require_active()
    state = decision.state
    try:
        chosen = state.move(name)
    except KeyError:
        known = [m.name for m in state.moves] or ["none"]
        raise refusals.MoveNotAllowed(
            f"State {state.name!r} has no move {name!r}; its moves are: {', '.join(known)}.",
            reasons=[f"no move {name!r} in {state.name}"],
        ) from None
    if chosen.by is not None:
        allowed = au.compile(chosen.by, run.subject)
        if not allowed.admits(au.principal_keys(principal)):
            raise refusals.MoveNotAllowed(
                f"You may not make the move {name!r}: it is for {allowed}.",
                reasons=[f"only {allowed} may make it"],
            )
    check = runtime.check_move(state, chosen, decision.env(principal))
    if not check.allowed:
        raise refusals.MoveNotAllowed(
            f"The move {name!r} is not allowed now: {'; '.join(check.reasons)}.",
            reasons=list(check.reasons),
        )
    cleaned = fields.validate_payload(chosen.fields, data)
    decision.log("run.moved", reason=f"move {name}", move=name, input=cleaned)
    states.transition(decision, chosen.to, reason=f"move {name}", via="move")
    states.settle(decision)
    return decision.outcome()


def goto(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    target: str,
    reason: str,
    now: datetime,
    actor: str | None,
    new_id: NewId,
    via: str = "timer",
) -> Outcome:
    """Move the run to ``target`` for a reason outside people's moves: a timer's (timeouts,
    reminders) or, ``via="goto"``, an operator's (see :func:`operator.goto`): an unknown
    target is refused, the goto logged, then exit hook, live slots cancelled (or held,
    entering a pausing state), enter hook, slots opened and settled as for a move."""
    acting: actors.Acting = actor
    if actor is None and via == "timer":
        acting = actors.TIMER_ACTOR  # hooks and routes read ``timer``; the timeline null
    decision = Decision(definition, run, slots, now=now, actor=acting, new_id=new_id)
    decision.require_active()
    if via == "goto":
        if not definition.has_state(target):
            known = ", ".join(s.name for s in definition.states)
            raise refusals.MoveNotAllowed(
                f"Workflow {definition.name!r} version {definition.version} has no state "
                f"{target!r}; its states are: {known}.",
                reasons=[f"no state {target!r}"],
            )
        decision.log("run.goto", reason=reason, source=run.state, target=target)
        reason = f"goto by {actor}: {reason}"
    states.transition(decision, target, reason=reason, via=via)
    states.settle(decision)
    return decision.outcome()


def expire(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    slot_id: str,
    expires_at: datetime,
    now: datetime,
    new_id: NewId,
) -> Outcome:
    """The slot's expiry came before its event: it closes with the outcome ``expired`` (its
    holder released, ``slot.expired`` on the timeline), then the state settles (its
    completion rule and routes read ``expired.<slot>``). A slot already closed, or of a
    visit the run has left, is refused (``SlotNotOpen``): the other outcome won."""
    decision = Decision(definition, run, slots, now=now, actor=None, new_id=new_id)
    decision.require_active()
    view = decision.slots.get(slot_id)
    if (
        view is None
        or view.visit != run.visit
        or not statuses.allows(view.status, statuses.SlotMove.EXPIRE)
    ):
        raise refusals.SlotNotOpen(
            "The slot closed before its expiry.", status=view.status if view else CANCELLED
        )
    gone = dataclasses.replace(
        view,
        status=statuses.after(view.status, statuses.SlotMove.EXPIRE),
        holder=None,
        cancelled_at=now,
        version=view.version + 1,
    )
    decision.put(holding.moved(gone, "slot.expired", now))
    decision.log(
        "slot.expired",
        slot_id=view.id,
        reason=f"{view.label}: its expiry ({expires_at.isoformat()}) came before its event",
        slot=view.name,
        expires_at=expires_at.isoformat(),
        holder=view.holder,
        outcome="expired",
    )
    states.settle(decision)
    return decision.outcome()


def cancel(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    reason: str,
    now: datetime,
    actor: actors.Acting,
    new_id: NewId,
) -> Outcome:
    """Cancel the run: every live slot is cancelled and the run ends."""
    decision = Decision(definition, run, slots, now=now, actor=actor, new_id=new_id)
    if run.status != statuses.RunStatus.SCHEDULED:  # a delayed start is cancelled before it starts
        decision.require_active()
    decision.cancel_live(reason=f"the run was cancelled: {reason}")
    decision.cancel_slots(pausing.held(decision), reason=f"the run was cancelled: {reason}")
    decision.set_run(status=RUN_CANCELLED, ended_at=now)
    decision.log("run.cancelled", reason=reason)
    return decision.outcome()
