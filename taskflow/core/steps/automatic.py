"""What an automatic state's outcome does to a run: pure decisions after the worker ran it.

The worker runs a state's action outside any transaction (``service/steps/steps.py``);
once it has a result, or the last attempt failed, it locks the run and asks
this module what follows. :func:`succeeded` stores the result on the run under
the state's name and takes the first matching ``on_success`` route;
:func:`failed` takes the first ``on_error`` route matching the error's class,
or leaves the run where it is (the step is then parked for an operator).
:func:`recorded` writes a recurring action's result without moving the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from taskflow.core.definition import actors
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.model import State
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import states
from taskflow.core.runs.decision import Decision, NewId
from taskflow.core.runs.model import ACTIVE, COMPLETED, AuditEntry, Outcome, RunView, SlotView


def current(run: RunView, state: str, visit: int) -> bool:
    """Whether the run still sits in the visit of ``state`` a step belongs to."""
    return run.status == ACTIVE and run.state == state and run.visit == visit


def succeeded(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    result: Any,
    details: Mapping[str, Any],
    now: datetime,
    new_id: NewId,
    actor: actors.Actor = actors.SYSTEM_ACTOR,
) -> Outcome:
    """The state's action returned ``result``: store it, take the first matching route
    (``actor``: the step's, ``automation:<step id>``, as its routes read it)."""
    decision = _deciding(definition, run, slots, now, new_id, actor)
    state = decision.state
    decision.set_run(results={**run.results, state.name: result})
    decision.log(
        "step.succeeded", reason=f"{state.name}: the action succeeded", state=state.name, **details
    )
    env = decision.env()
    target = next((r.to for r in state.success_routes if ex.matches(r.when, env)), None)
    if target is None:
        decision.log(
            "route.unmatched",
            reason=f"{state.name}'s action succeeded but no on_success route matched; the run "
            "waits here until someone moves it",
            state=state.name,
            routes=[
                ex.describe(r.when) if r.when is not None else "always"
                for r in state.success_routes
            ],
        )
        if decision.run.unmatched_at is None:
            decision.set_run(unmatched_at=now)
        return decision.outcome()
    return _moved(decision, target, f"{state.name} succeeded")


def succeeded_plainly(
    definition: Definition,
    run: RunView,
    *,
    touched: bool,
    result: Any,
    details: Mapping[str, Any],
    now: datetime,
    actor: actors.Actor = actors.SYSTEM_ACTOR,
) -> Outcome | None:
    """:func:`succeeded` without the engine's working copy, for the plain case: the run has
    no slot and no timer row (``touched`` False), the state no exit hook, no timer, no
    recurring work, and the matching ``on_success`` route leads to a terminal state with no
    hook, slot, action or timer. Then the run completes with these five lines; in any other
    case this returns None (decide with :func:`succeeded`). The outcome equals
    :func:`succeeded`'s (tests/unit/steps/test_plain_success.py checks every automatic state
    of the examples, the bench and the tests)."""
    source = definition.state(run.state)
    if touched or run.status != ACTIVE or not _plain(source, leaving=True):
        return None
    results = {**run.results, source.name: result}
    target = _first_match(source, run, results, actor)
    if target is None or not _plain(definition.state(target), leaving=False):
        return None
    done = RunView(  # what dataclasses.replace makes, without its per-field checks
        **{
            **vars(run),
            "results": results,
            "state": target,
            "visit": run.visit + 1,
            "state_entered_at": now,
            "unmatched_at": None,
            "status": COMPLETED,
            "ended_at": now,
        }
    )
    name, why = source.name, f"{source.name} succeeded"
    audit = (
        AuditEntry(
            "step.succeeded",
            now,
            None,
            None,
            f"{name}: the action succeeded",
            {"state": name, **details},
        ),
        AuditEntry("state.exited", now, None, None, why, {"state": name}),
        AuditEntry(
            "run.transitioned",
            now,
            None,
            None,
            why,
            {"source": name, "target": target, "via": "step"},
        ),
        AuditEntry("state.entered", now, None, None, why, {"state": target, "via": "step"}),
        AuditEntry("run.completed", now, None, None, None, {"state": target}),
    )
    return Outcome(done, (), (), audit, run_changed=True)


def _first_match(
    source: State, run: RunView, results: Mapping[str, Any], actor: actors.Actor
) -> str | None:
    """The target of ``source``'s first ``on_success`` route matching (its conditions read
    the run's subject, ``results`` and the actor)."""
    env: ex.Env | None = None
    for route in source.success_routes:
        if route.when is None:
            return route.to
        env = env or ex.Env(subject=run.subject, result=results, actor=actor.as_value())
        if ex.matches(route.when, env):
            return route.to
    return None


def _plain(state: State, *, leaving: bool) -> bool:
    """Nothing but the run row and its lines moves when the run leaves (or enters) ``state``."""
    if state.on_exit is not None or state.on_enter is not None or state.pausing:
        return False
    if state.slots or state.timeouts or state.every:
        return False
    return leaving or (state.terminal and state.action is None)


def error_route(definition: Definition, state: str, error_classes: Sequence[str]) -> str | None:
    """The target of the first ``on_error`` route matching an error of these classes."""
    for route in definition.state(state).on_error:
        if route.matches(error_classes):
            return route.to
    return None


def failed(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    error_classes: Sequence[str],
    details: Mapping[str, Any],
    now: datetime,
    new_id: NewId,
    actor: actors.Actor = actors.SYSTEM_ACTOR,
) -> Outcome:
    """The last attempt failed: take the matching ``on_error`` route, or stay (parked)."""
    decision = _deciding(definition, run, slots, now, new_id, actor)
    state = decision.state
    target = error_route(definition, state.name, error_classes)
    message = details.get("error", "")
    if target is None:
        decision.log(
            "step.parked",
            reason=f"{state.name}: the action failed ({message}) and no on_error route "
            "matches; an operator retries it (retryStep) or moves the run",
            state=state.name,
            **details,
        )
        return decision.outcome()
    decision.log("step.failed", reason=f"{state.name}: the action failed ({message})", **details)
    return _moved(decision, target, f"{state.name} failed")


def _deciding(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    now: datetime,
    new_id: NewId,
    actor: actors.Actor,
) -> Decision:
    """A decision on the run, refused unless it is active (an ended run has no step to follow)."""
    decision = Decision(definition, run, slots, now=now, actor=actor, new_id=new_id)
    decision.require_active()
    return decision


def _moved(decision: Decision, target: str, reason: str) -> Outcome:
    """Move to ``target`` by the step's outcome and settle there (automatic states follow)."""
    states.transition(decision, target, reason=reason, via="step")
    states.settle(decision)
    return decision.outcome()
