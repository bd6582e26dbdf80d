"""What child runs do to their parent: pure decisions (docs/composition.md).

A state with children makes one ``run_child`` row per child when the run enters it
(:func:`due_children`, written by the unit of work that enters the state, keyed by
parent, visit and label so planning it again adds nothing). The worker starts the
child; when the child ends, the worker reads its outcome (:func:`ended`) and resumes the
parent once (:func:`resumed`): the outcome is kept on the parent under its label, a
failure is caught by the state's ``catch`` or cancels the parent, and otherwise the
state's routes are taken when every awaited child is back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskflow.core.definition import children as ch
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import states
from taskflow.core.runs.decision import Decision, NewId
from taskflow.core.runs.model import ACTIVE, RUN_CANCELLED, Outcome, RunView, SlotView
from taskflow.core.runs.statuses import ChildStatus

#: ``run_child.status`` (``statuses.ChildStatus``).
STARTING, LIVE, CANCELLING, ENDED, SETTLED, DETACHED = tuple(ChildStatus)
#: Where a run cancelled by an uncaught child failure keeps that failure's kind.
FAILED_KEY = "@failed"
#: The statuses of a child still in flight (the metric, the board's progress).
IN_FLIGHT = (STARTING, LIVE, CANCELLING, ENDED)


@dataclass(frozen=True)
class DueChild:
    """A ``run_child`` row to add (a key that exists adds nothing)."""

    key: str
    parent: str
    visit: int
    state: str
    label: str
    workflow: str
    awaited: bool
    subject: Mapping[str, Any]


def due_children(definition: Definition, run: RunView) -> list[DueChild]:
    """The child rows of the current state, for the visit the run just entered (none when
    the run is not active or the state starts no child)."""
    if run.status != ACTIVE:
        return []
    state = definition.state(run.state)
    return [
        DueChild(
            f"{run.id}:{run.visit}:{c.label}",
            run.id,
            run.visit,
            run.state,
            c.label,
            c.workflow,
            c.awaited,
            {**c.subject_spec(run.subject), **({"race": True} if state.await_first else {})},
        )
        for c in state.children
    ]


def ended(
    definition: Definition, run: RunView, slots: Iterable[SlotView], *, reason: str | None
) -> dict[str, Any]:
    """A child's outcome as its parent reads it: ``run``, ``state``, ``status``, ``failure``
    (a kind, or None), ``reason`` and ``result`` (the document its workflow declares,
    evaluated on the child as it ended)."""
    failure: str | None
    if run.status == RUN_CANCELLED:
        # A run cancelled by its own child's uncaught failure fails the same way.
        failure = str(run.results.get(FAILED_KEY) or ch.CANCELLED)
    else:
        failure = (
            ch.failure_kind(definition.state(run.state).failure)
            if definition.has_state(run.state)
            else None
        )
    env = Decision(definition, run, slots, now=run.state_entered_at, actor=None, new_id=str).env()
    result = {}
    for name, given in definition.result:
        value = ex.value_of(given, env) if isinstance(given, ex.Expr) else given
        result[name] = None if value is ex.MISSING else value
    return {
        "run": run.id,
        "workflow": run.workflow,
        "state": run.state,
        "status": str(run.status),
        "failure": failure,
        "reason": reason if failure else None,
        "result": result,
    }


def refused(workflow: str, reason: str) -> dict[str, Any]:
    """The outcome of a child that could not be started (failure kind ``refused``)."""
    return {
        "run": None,
        "workflow": workflow,
        "state": None,
        "status": "refused",
        "failure": ch.REFUSED,
        "reason": reason,
        "result": {},
    }


def ended_details(label: str, outcome: Mapping[str, Any]) -> dict[str, Any]:
    """The details of a ``child.ended`` line (and of the ``run.child_ended`` event)."""
    return {
        "label": label,
        "child_run": outcome.get("run"),
        "child_workflow": outcome.get("workflow"),
        "state": outcome.get("state"),
        "status": outcome.get("status"),
        "failure": outcome.get("failure"),
    }


def current(run: RunView, state: str, visit: int) -> bool:
    """Whether the parent still waits in the visit of ``state`` a child row belongs to."""
    return run.status == ACTIVE and run.state == state and run.visit == visit


def resumed(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    label: str,
    outcome: Mapping[str, Any],
    now: datetime,
    new_id: NewId,
) -> Outcome:
    """The child under ``label`` ended with ``outcome``: keep it on the parent; a failure
    goes to the first catch that takes it or, uncaught, cancels the parent; otherwise the
    state settles (its routes are taken once every awaited child is back)."""
    decision = Decision(definition, run, slots, now=now, actor="system", new_id=new_id)
    decision.require_active()
    _keep(decision, label, outcome)
    kind = outcome.get("failure")
    state = decision.state
    if not kind or (
        state.await_first and not ch.all_back(decision.run.results, state.awaits, run.visit)
    ):
        states.settle(decision)  # a race's failure raises once no sibling is left to win
        return decision.outcome()
    env = decision.env()
    catch = next((c for c in decision.state.catch if c.takes(label, str(kind), env)), None)
    if catch is not None:
        why = f"caught {kind} of child {label!r}"
        decision.log("child.caught", reason=why, label=label, failure=kind, to=catch.to)
        states.transition(decision, catch.to, reason=why, via="catch")
        states.settle(decision)
        return decision.outcome()
    why = f"uncaught {kind} of child {label!r}: {outcome.get('reason') or 'no reason given'}"
    decision.log("child.uncaught", reason=why, label=label, failure=kind)
    decision.set_run(results={**decision.run.results, FAILED_KEY: kind})
    decision.cancel_live(reason=f"the run was cancelled: {why}")
    decision.set_run(status=RUN_CANCELLED, ended_at=now)
    decision.log("run.cancelled", reason=why)
    return decision.outcome()


def resumed_all(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    ends: Iterable[tuple[str, Mapping[str, Any]]],
    now: datetime,
    new_id: NewId,
) -> Outcome:
    """Several awaited children ended well, as (label, outcome): :func:`resumed` for each in
    turn, as one decision (the worker reads a parent's ends together). The caller gives no
    failure and no race (``await_first``): then each end only keeps its outcome, and the state
    settles once, after the last, as it would have after each."""
    decision = Decision(definition, run, slots, now=now, actor="system", new_id=new_id)
    decision.require_active()
    for label, outcome in ends:
        assert not outcome.get("failure"), "a failure is decided on its own (resumed)"
        _keep(decision, label, outcome)
    assert not decision.state.await_first, "a race is decided an end at a time (resumed)"
    states.settle(decision)
    return decision.outcome()


def _keep(decision: Decision, label: str, outcome: Mapping[str, Any]) -> None:
    """Keep the child's outcome on the parent under its label (``child("label")``) and say
    so on the timeline (``child.ended``)."""
    run = decision.run
    kept = {**ch.outcomes(run.results), label: {**outcome, "visit": run.visit}}
    decision.set_run(results={**run.results, ch.RESULTS_KEY: kept})
    kind = outcome.get("failure")
    decision.log(
        "child.ended",
        reason=f"child {label!r} ended in {outcome.get('state') or outcome.get('status')}"
        + (f" ({kind}: {outcome.get('reason')})" if kind else ""),
        **ended_details(label, outcome),
    )


def cause(parent_id: str, reason: str | None) -> str:
    """The reason a child cancelled with its parent gives on its timeline."""
    return f"its parent run {parent_id} was cancelled: {reason or 'no reason given'}"


def compensates(subject_spec: Mapping[str, Any]) -> str | None:
    """The saga step a ``run_child`` row compensates (its label), or None for a step."""
    found = subject_spec.get("compensates")
    return None if found is None else str(found)


def undoable(subject_spec: Mapping[str, Any], outcome: Mapping[str, Any]) -> bool:
    """Whether a child's end, as ``outcome``, is a saga step done that its compensation
    undoes: the step has one, and its run completed in a state that is no failure."""
    return (
        subject_spec.get("compensation") is not None
        and outcome.get("status") == "completed"
        and not outcome.get("failure")
    )


def compensation_details(
    label: str, workflow: str, child: str | None, subject_spec: Mapping[str, Any]
) -> dict[str, Any]:
    """The details of ``run.compensating`` / ``run.compensated`` lines (and their events)."""
    return {
        "label": label,
        "step_run": subject_spec.get("step_run"),
        "compensation_workflow": workflow,
        "child_run": child,
        "attempt": attempts(subject_spec)[0],
    }


def next_attempt_at(subject_spec: Mapping[str, Any], attempt: int, failed: datetime) -> datetime:
    """When attempt ``attempt`` (2 or more) of a compensation that failed at ``failed``
    starts: the step's ``compensation_backoff`` after it, doubled for each attempt after the
    second (rows written before the backoff existed wait the default)."""
    given = subject_spec.get("compensation_backoff")
    backoff = ch.DEFAULT_COMPENSATION_BACKOFF if given is None else float(given)
    return failed + timedelta(seconds=backoff * 2 ** max(attempt - 2, 0))


def attempts(subject_spec: Mapping[str, Any]) -> tuple[int, int]:
    """A compensation row's attempt and how many attempts its step allows (1, 1 if unsaid)."""
    return int(subject_spec.get("attempt") or 1), int(
        subject_spec.get("compensation_attempts") or 1
    )
