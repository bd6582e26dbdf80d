"""Moving a run between states, and the settle loop that decides when it moves.

After every happening the current state's completion rule is re-checked
(:func:`settle`): pending slots whose ``after`` siblings are satisfied open;
when the rule holds, the first matching route is taken, the state is left
(exit hook, live slots cancelled or held) and the next entered (enter hook,
which may redirect; slots opened), until the run waits for people again or
ends. A route list that matches nothing is written on the timeline and the run
stays where it is.
"""

from __future__ import annotations

import dataclasses

from taskflow.core.definition import children, runtime
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.model import Slot, State
from taskflow.core.runs import opening, pausing, statuses
from taskflow.core.runs.decision import Decision, EngineError
from taskflow.core.runs.model import (
    ACTIVE,
    CANCELLED,
    COMPLETED,
    EXPIRED,
    PENDING,
    SATISFIED,
    SlotView,
)
from taskflow.core.steps import once


def open_slot(decision: Decision, state: State, slot: Slot) -> None:
    """Instantiate ``slot`` for this visit (none when disarmed, one per foreach element)."""
    run = decision.run
    for view in opening.instantiate(
        state,
        slot,
        run_id=run.id,
        visit=run.visit,
        subject=run.subject,
        satisfied=set(),
        now=decision.now,
        new_id=decision.new_id,
        results=run.results,
    ):
        decision.put(view, created=True)
        decision.log_opened(view)


def enter(
    decision: Decision, name: str, *, reason: str, via: str, held: list[SlotView] | None = None
) -> None:
    """Enter state ``name``: enter hook (which may redirect), held slots, then its slots."""
    state = decision.definition.state(name)
    decision.set_run(
        state=name, visit=decision.run.visit + 1, state_entered_at=decision.now, unmatched_at=None
    )
    decision.log("state.entered", reason=reason, state=name, via=via)
    if state.on_enter is not None:
        redirect = _run_hook(decision, state, "enter")
        if redirect:
            if redirect not in state.redirects or not decision.definition.has_state(redirect):
                raise EngineError(
                    f"workflow {decision.definition.name!r}: the enter hook of state {name!r} "
                    f"redirected to {redirect!r}, which is not in its redirects "
                    f"{list(state.redirects)}; declare it there."
                )
            decision.count_transition()
            decision.log("state.redirected", reason="enter hook", state=name, to=redirect)
            enter(
                decision,
                redirect,
                reason=f"redirected by the enter hook of {name}",
                via="redirect",
                held=held,
            )
            return
    if held and pausing.settle_held(decision, state, held):
        return
    if state.terminal:
        decision.set_run(status=COMPLETED, ended_at=decision.now)
        decision.log("run.completed", state=name)
        return
    for slot in state.slots:
        open_slot(decision, state, slot)


def _run_hook(decision: Decision, state: State, which: str) -> str | None:
    hook = state.on_enter if which == "enter" else state.on_exit
    assert hook is not None
    try:
        with once.recording(decision, state.name, which):  # steps.once in the hook
            result = hook(decision.hook_context(state))
    except Exception as exc:
        raise EngineError(
            f"workflow {decision.definition.name!r}: the {which} hook of state {state.name!r} "
            f"failed: {type(exc).__name__}: {exc}. Nothing was changed."
        ) from exc
    return result if which == "enter" and isinstance(result, str) else None


def leave(decision: Decision, *, reason: str, hold: bool = False) -> None:
    """Leave the current state: exit hook, then its live slots held or cancelled."""
    state = decision.state
    if state.on_exit is not None:
        _run_hook(decision, state, "exit")
    if hold:
        pausing.hold_live(decision)
    else:
        decision.cancel_live(reason=f"the run left {state.name}")
    decision.log("state.exited", reason=reason, state=state.name)


def transition(decision: Decision, target: str, *, reason: str, via: str) -> None:
    """Leave the current state for ``target``."""
    decision.count_transition()
    source = decision.run.state
    held = pausing.held(decision)
    hold = pausing.holds_on_leaving(decision.state, decision.definition.state(target))
    leave(decision, reason=reason, hold=hold)
    decision.log("run.transitioned", reason=reason, source=source, target=target, via=via)
    enter(decision, target, reason=reason, via=via, held=held)


def open_ready(decision: Decision) -> None:
    """Open pending slots whose ``after`` siblings are all satisfied."""
    state = decision.state
    satisfied = opening.satisfied_names(state, decision.current())
    for view in decision.current():
        if view.status != PENDING:
            continue
        if runtime.may_open(state.slot(view.name), satisfied):
            slot = state.slot(view.name)
            item = opening.item_of(view)
            opened = dataclasses.replace(
                view,
                status=statuses.after(view.status, statuses.SlotMove.OPEN),
                opened_at=decision.now,
                audience=opening.audience_for(slot, decision.run.subject, item),
                label=opening.label_for(slot, decision.run.subject, item, decision.run.results),
                version=view.version + 1,
            )
            decision.put(opened)
            decision.log_opened(opened)


def settle(decision: Decision) -> None:
    """Take routes while the current state's completion rule holds and the run is active."""
    while decision.run.status == ACTIVE:
        open_ready(decision)
        state = decision.state
        if state.automatic:
            return  # it waits for its action (core/steps/automatic.py)
        back = children.first_back if state.await_first else children.all_back
        if state.awaits and not back(decision.run.results, state.awaits, decision.run.visit):
            return  # it waits for its children (core/compose/compose.py)
        current = [s for s in decision.current() if s.status != CANCELLED]
        satisfied = sum(1 for s in current if s.status == SATISFIED)
        expired = sum(1 for s in current if s.status == EXPIRED)
        # A pending slot waiting for a sibling that expired can never open: it waits for
        # nothing, so it does not keep the state from closing (docs/sla.md, "Expiry").
        gone = {s.name for s in current if s.status == EXPIRED}
        waiting = [
            s for s in current if s.status != PENDING or not gone & set(state.slot(s.name).after)
        ]
        env = decision.env()
        if not state.routes or not runtime.completion_met(
            state.completion, satisfied, len(waiting), env, expired
        ):
            return
        target = runtime.choose_route(state, env)
        if target is None:
            decision.log(
                "route.unmatched",
                reason=f"{state.name} is done ({state.completion.describe()}) but no route "
                "matched; the run waits here until the subject changes or someone moves it",
                state=state.name,
                routes=[
                    ex.describe(r.when) if r.when is not None else "always" for r in state.routes
                ],
            )
            if decision.run.unmatched_at is None:
                # Remembered on the run so "needs attention" finds it without the timeline.
                decision.set_run(unmatched_at=decision.now)
            return
        transition(
            decision,
            target,
            reason=f"{state.name} done: {state.completion.describe()}",
            via="route",
        )
