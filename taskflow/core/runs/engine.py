"""The engine: given a run, its slots, a happening and ``now``, decide what changes.

Every entry point returns an :class:`~taskflow.core.runs.model.Outcome` (the
run as it becomes, the slots created and changed, the timeline lines) or raises
a refusal, having changed nothing. After every happening the current state's
completion rule is re-checked ("settle"): pending slots whose ``after`` siblings
are satisfied open; when the rule holds, the first matching route is taken,
the state is left (exit hook, live slots cancelled) and the next entered
(enter hook, which may redirect; slots opened), until the run waits for people
again or ends. A route list that matches nothing is written on the timeline
and the run stays where it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core import deadlines
from taskflow.core.definition import audience as au
from taskflow.core.definition import expr as ex
from taskflow.core.definition import fields, runtime
from taskflow.core.definition.model import HookContext, State
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import opening, refusals
from taskflow.core.runs import slots as slot_moves
from taskflow.core.runs.model import (
    ACTIVE,
    CANCELLED,
    COMPLETED,
    OPEN,
    PENDING,
    RUN_CANCELLED,
    SATISFIED,
    AuditEntry,
    Outcome,
    RunView,
    SlotView,
)

#: More automatic transitions than this in one decision means a cycle of states nobody waits in.
MAX_TRANSITIONS = 50

NewId = Callable[[], str]


class EngineError(errors.TaskflowError):
    """The definition led the engine somewhere it cannot go (a hook failed, a cycle)."""

    code = "ENGINE_ERROR"


class _Decision:
    """A working copy of a run and its slots while one happening is decided."""

    def __init__(
        self,
        definition: Definition,
        run: RunView,
        slots: Iterable[SlotView],
        *,
        now: datetime,
        actor: str | None,
        new_id: NewId,
    ) -> None:
        self.definition = definition
        self.run = run
        self.now = now
        self.actor = actor
        self.new_id = new_id
        self.slots: dict[str, SlotView] = {s.id: s for s in slots}
        self.created: list[str] = []
        self.changed: set[str] = set()
        self.audit: list[AuditEntry] = []
        self.run_changed = False
        self.transitions = 0

    # -- bookkeeping ------------------------------------------------------------------------

    def log(
        self, kind: str, *, slot_id: str | None = None, reason: str | None = None, **details: Any
    ) -> None:
        self.audit.append(AuditEntry(kind, self.now, self.actor, slot_id, reason, details))

    def put(self, view: SlotView, *, created: bool = False) -> None:
        self.slots[view.id] = view
        if created:
            self.created.append(view.id)
        elif view.id not in self.created:
            self.changed.add(view.id)

    def set_run(self, **changes: Any) -> None:
        self.run = dataclasses.replace(self.run, **changes)
        self.run_changed = True

    def outcome(self) -> Outcome:
        # Clocks start when a slot opens and are met when it is claimed or satisfied,
        # however the decision got there; one pass at the end sees every such slot.
        for slot_id in [*self.created, *self.changed]:
            view = self.slots[slot_id]
            if view.status != CANCELLED:
                self.slots[slot_id] = deadlines.sync_clocks(
                    self.definition, view, self.run.subject, self.now
                )
        return Outcome(
            run=self.run,
            created=tuple(self.slots[i] for i in self.created),
            changed=tuple(self.slots[i] for i in sorted(self.changed)),
            audit=tuple(self.audit),
            run_changed=self.run_changed,
        )

    # -- reading ----------------------------------------------------------------------------

    @property
    def state(self) -> State:
        return self.definition.state(self.run.state)

    def current(self) -> list[SlotView]:
        """This visit's slots, in a stable order."""
        found = [s for s in self.slots.values() if s.visit == self.run.visit]
        return sorted(
            found, key=lambda s: (s.name, s.item_index if s.item_index is not None else -1)
        )

    def payloads(self) -> dict[str, Any]:
        """Deposited payloads by slot name (the latest visit wins; foreach slots give a list)."""
        by_name: dict[str, Any] = {}
        ordered = sorted(
            (s for s in self.slots.values() if s.status == SATISFIED),
            key=lambda s: (s.visit, s.item_index if s.item_index is not None else -1),
        )
        lists: dict[tuple[str, int], list[Any]] = {}
        for view in ordered:
            if view.item_index is None:
                by_name[view.name] = dict(view.payload or {})
            else:
                bucket = lists.setdefault((view.name, view.visit), [])
                bucket.append(dict(view.payload or {}))
                by_name[view.name] = bucket
        return by_name

    def env(self, principal: Any = None) -> ex.Env:
        return ex.Env(subject=self.run.subject, payload=self.payloads(), principal=principal)

    def hook_context(self, state: State) -> HookContext:
        return HookContext(
            workflow=self.definition.name,
            state=state.name,
            subject=self.run.subject,
            payload=self.payloads(),
            run_id=self.run.id,
            now=self.now,
        )

    # -- states -----------------------------------------------------------------------------

    def held(self) -> list[SlotView]:
        """Live slots of an earlier visit: what a pausing state holds for the state before it."""
        return [s for s in self.slots.values() if s.live and s.visit != self.run.visit]

    def enter(
        self, name: str, *, reason: str, via: str, held: list[SlotView] | None = None
    ) -> None:
        state = self.definition.state(name)
        self.set_run(state=name, visit=self.run.visit + 1, state_entered_at=self.now)
        self.log("state.entered", reason=reason, state=name, via=via)
        if state.on_enter is not None:
            redirect = self._run_hook(state, "enter")
            if redirect:
                if redirect not in state.redirects or not self.definition.has_state(redirect):
                    raise EngineError(
                        f"workflow {self.definition.name!r}: the enter hook of state {name!r} "
                        f"redirected to {redirect!r}, which is not in its redirects "
                        f"{list(state.redirects)}; declare it there."
                    )
                self.count_transition()
                self.log("state.redirected", reason="enter hook", state=name, to=redirect)
                self.enter(
                    redirect,
                    reason=f"redirected by the enter hook of {name}",
                    via="redirect",
                    held=held,
                )
                return
        if held and not state.pausing:
            if held[0].state == name and not state.terminal:
                self.resume_held(held)
                return
            self.cancel_slots(held, reason=f"the run moved on to {name}")
        if state.terminal:
            self.set_run(status=COMPLETED, ended_at=self.now)
            self.log("run.completed", state=name)
            return
        for slot in state.slots:
            for view in opening.instantiate(
                state,
                slot,
                run_id=self.run.id,
                visit=self.run.visit,
                subject=self.run.subject,
                satisfied=set(),
                now=self.now,
                new_id=self.new_id,
            ):
                self.put(view, created=True)
                self._log_opened(view)

    def _log_opened(self, view: SlotView) -> None:
        kind = "slot.opened" if view.status == OPEN else "slot.pending"
        self.log(
            kind,
            slot_id=view.id,
            slot=view.name,
            label=view.label,
            audience=str(view.audience),
            item_index=view.item_index,
        )

    def _run_hook(self, state: State, which: str) -> str | None:
        hook = state.on_enter if which == "enter" else state.on_exit
        assert hook is not None
        try:
            result = hook(self.hook_context(state))
        except Exception as exc:
            raise EngineError(
                f"workflow {self.definition.name!r}: the {which} hook of state {state.name!r} "
                f"failed: {type(exc).__name__}: {exc}. Nothing was changed."
            ) from exc
        return result if which == "enter" and isinstance(result, str) else None

    def leave(self, *, reason: str, hold: bool = False) -> None:
        state = self.state
        if state.on_exit is not None:
            self._run_hook(state, "exit")
        if hold:
            self.hold_live()
        else:
            self.cancel_live(reason=f"the run left {state.name}")
        self.log("state.exited", reason=reason, state=state.name)

    def hold_live(self) -> None:
        """Keep this state's live slots (holders and all) with their clocks paused."""
        for view in self.current():
            if view.live:
                self.put(deadlines.paused(view, self.now))
                self.log("slot.held", slot_id=view.id, slot=view.name, state=view.state)

    def resume_held(self, held: list[SlotView]) -> None:
        """The run is back where a pausing state held it: the held slots carry on."""
        for view in sorted(held, key=lambda s: (s.name, s.item_index or 0)):
            back = dataclasses.replace(view, visit=self.run.visit, version=view.version + 1)
            self.put(deadlines.resumed(back, self.now))
            self.log("slot.resumed", slot_id=view.id, slot=view.name, state=view.state)

    def cancel_live(self, *, reason: str) -> None:
        self.cancel_slots(self.current(), reason=reason)

    def cancel_slots(self, views: Iterable[SlotView], *, reason: str) -> None:
        for view in list(views):
            if view.live:
                self.put(
                    dataclasses.replace(
                        view, status=CANCELLED, cancelled_at=self.now, version=view.version + 1
                    )
                )
                self.log("slot.cancelled", slot_id=view.id, reason=reason, slot=view.name)

    def count_transition(self) -> None:
        self.transitions += 1
        if self.transitions > MAX_TRANSITIONS:
            raise EngineError(
                f"workflow {self.definition.name!r}: the run moved through {MAX_TRANSITIONS} "
                "states without waiting for anyone; check the routes for a cycle of states "
                "without slots."
            )

    def transition(self, target: str, *, reason: str, via: str) -> None:
        self.count_transition()
        source = self.run.state
        # A pausing state holds the state the run came from (docs/definitions.md, "States").
        held = self.held()
        into_pause = self.definition.state(target).pausing and not self.state.pausing
        self.leave(reason=reason, hold=into_pause)
        self.log("run.transitioned", reason=reason, source=source, target=target, via=via)
        self.enter(target, reason=reason, via=via, held=held)

    # -- the settle loop --------------------------------------------------------------------

    def open_ready(self) -> None:
        """Open pending slots whose ``after`` siblings are all satisfied."""
        state = self.state
        satisfied = opening.satisfied_names(state, self.current())
        for view in self.current():
            if view.status != PENDING:
                continue
            if runtime.may_open(state.slot(view.name), satisfied):
                slot = state.slot(view.name)
                item = opening.item_of(view)
                opened = dataclasses.replace(
                    view,
                    status=OPEN,
                    opened_at=self.now,
                    audience=opening.audience_for(slot, self.run.subject, item),
                    label=opening.label_for(slot, self.run.subject, item),
                    version=view.version + 1,
                )
                self.put(opened)
                self._log_opened(opened)

    def settle(self) -> None:
        while self.run.status == ACTIVE:
            self.open_ready()
            state = self.state
            current = [s for s in self.current() if s.status != CANCELLED]
            satisfied = sum(1 for s in current if s.status == SATISFIED)
            env = self.env()
            if not state.routes or not runtime.completion_met(
                state.completion, satisfied, len(current), env
            ):
                return
            target = runtime.choose_route(state, env)
            if target is None:
                self.log(
                    "route.unmatched",
                    reason=f"{state.name} is done ({state.completion.describe()}) but no route "
                    "matched; the run waits here until the subject changes or someone moves it",
                    state=state.name,
                    routes=[
                        ex.describe(r.when) if r.when is not None else "always"
                        for r in state.routes
                    ],
                )
                return
            self.transition(
                target, reason=f"{state.name} done: {state.completion.describe()}", via="route"
            )

    # -- guards -----------------------------------------------------------------------------

    def require_active(self) -> None:
        if self.run.status != ACTIVE:
            raise refusals.RunNotActive(
                f"The run is {self.run.status}; nothing more can happen on it.",
                status=self.run.status,
            )


def _decision(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    now: datetime,
    actor: str | None,
    new_id: NewId,
) -> _Decision:
    return _Decision(definition, run, slots, now=now, actor=actor, new_id=new_id)


def start(
    definition: Definition,
    *,
    run_id: str,
    subject: Mapping[str, Any],
    now: datetime,
    actor: str | None,
    new_id: NewId,
) -> Outcome:
    """A new run in the initial state, its slots opened and its completion settled."""
    initial = definition.initial_state.name
    run = RunView(
        id=run_id,
        workflow=definition.name,
        definition_version=definition.version,
        state=initial,
        status=ACTIVE,
        visit=0,
        subject=dict(subject),
        state_entered_at=now,
    )
    decision = _decision(definition, run, (), now, actor, new_id)
    decision.log("run.started", workflow=definition.name, version=definition.version)
    decision.enter(initial, reason="the run started", via="start")
    decision.settle()
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
    decision = _decision(definition, run, slots, now, actor, new_id)
    decision.require_active()
    view = decision.slots.get(slot_id)
    if view is None or view.visit != run.visit:
        raise refusals.SlotNotOpen(
            "The slot belongs to a state the run has left; it can no longer be completed.",
            status=view.status if view else CANCELLED,
        )
    if on_behalf:
        slot_moves.check_version(view, expected_version)
        if view.status not in (OPEN, "claimed"):
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
    decision.put(done)
    decision.log(
        "slot.satisfied", slot_id=view.id, slot=view.name, event=view.waits_for, payload=cleaned
    )
    decision.settle()
    return decision.outcome()


def change_subject(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    subject: Mapping[str, Any],
    now: datetime,
    actor: str | None,
    new_id: NewId,
) -> Outcome:
    """The subject changed: re-arm or disarm slots, refresh audiences and labels, settle."""
    decision = _decision(definition, run, slots, now, actor, new_id)
    if run.status != ACTIVE:
        decision.set_run(subject=dict(subject))
        return decision.outcome()
    before = run.subject
    changed = sorted(k for k in set(before) | set(subject) if before.get(k) != subject.get(k))
    decision.set_run(subject=dict(subject))
    decision.log("subject.updated", changed=changed)
    for view in list(decision.slots.values()):
        if view.live and view.clocks:
            rebudgeted = deadlines.rebudget(definition, view, subject)
            if rebudgeted is not view:
                decision.put(dataclasses.replace(rebudgeted, version=view.version + 1))
    state = decision.state
    env = ex.Env(subject=subject)
    for slot in state.slots:
        instances = [v for v in decision.current() if v.name == slot.name]
        armed = runtime.is_armed(slot, env)
        if not armed:
            for view in instances:
                if view.live:
                    decision.put(
                        dataclasses.replace(
                            view, status=CANCELLED, cancelled_at=now, version=view.version + 1
                        )
                    )
                    decision.log(
                        "slot.disarmed",
                        slot_id=view.id,
                        slot=view.name,
                        reason="its armed condition no longer holds",
                    )
            continue
        if not instances:
            for view in opening.instantiate(
                state,
                slot,
                run_id=run.id,
                visit=run.visit,
                subject=subject,
                satisfied=set(),
                now=now,
                new_id=new_id,
            ):
                decision.put(view, created=True)
                decision._log_opened(view)
            continue
        for view in instances:
            if view.status in (OPEN, PENDING):
                item = opening.item_of(view)
                refreshed = dataclasses.replace(
                    view,
                    audience=opening.audience_for(slot, subject, item),
                    delegates=opening.delegates_for(slot, subject, item),
                    label=opening.label_for(slot, subject, item),
                )
                if refreshed != view:
                    decision.put(dataclasses.replace(refreshed, version=view.version + 1))
    decision.settle()
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
    decision = _decision(definition, run, slots, now, getattr(principal, "id", None), new_id)
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
    decision.transition(chosen.to, reason=f"move {name}", via="move")
    decision.settle()
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
) -> Outcome:
    """Move the run to ``target`` for a reason outside people's moves (timeouts, reminders)."""
    decision = _decision(definition, run, slots, now, actor, new_id)
    decision.require_active()
    decision.transition(target, reason=reason, via="timer")
    decision.settle()
    return decision.outcome()


def cancel(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    reason: str,
    now: datetime,
    actor: str | None,
) -> Outcome:
    """Cancel the run: every live slot is cancelled and the run ends."""
    decision = _decision(definition, run, slots, now, actor, lambda: "")
    decision.require_active()
    decision.cancel_live(reason=f"the run was cancelled: {reason}")
    decision.cancel_slots(decision.held(), reason=f"the run was cancelled: {reason}")
    decision.set_run(status=RUN_CANCELLED, ended_at=now)
    decision.log("run.cancelled", reason=reason)
    return decision.outcome()
