"""What an automatic step's action receives, and ``once``: the API for action authors.

An action is an async function taking one :class:`StepContext`::

    async def post_payment(ctx: StepContext) -> dict[str, Any]:
        receipt = await steps.once("receipt", lambda: make_receipt(ctx.subject))
        ...
        return {"payment_id": "..."}

It may be run more than once for one step (a retry, or a worker that died
mid-action: at-least-once), so it passes ``ctx.idempotency_key`` to the service
it calls. :func:`once` records the first result of ``fn`` under ``name`` for the
run and returns it on every later execution of that run (replays, retries,
re-entered states) without calling ``fn`` again: awaited in an action, returning
the value directly in an enter/exit hook. See docs/automatic-steps.md.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from taskflow import errors
from taskflow.core.common import scoped
from taskflow.core.definition import actors
from taskflow.core.steps import once as hook_once


@dataclass(frozen=True)
class StepContext:
    """What an action is given.

    ``idempotency_key`` is the same for every attempt of one step (pass it on, so the
    other side can answer a repeated call once); ``attempt`` counts from 1.
    ``payload`` holds the payloads deposited so far by slot name, ``result`` what
    earlier automatic steps of the run returned by state name.
    """

    run_id: str
    workflow: str
    state: str
    kind: str
    subject: Mapping[str, Any]
    idempotency_key: str
    attempt: int
    now: datetime
    payload: Mapping[str, Any] = field(default_factory=dict)
    result: Mapping[str, Any] = field(default_factory=dict)
    #: Settings an action may need (e.g. ``payments_url``), as the worker has them.
    settings: Any = None
    #: Who acts: the step itself, ``automation:<step id>`` (``core/definition/actors.py``).
    actor: actors.Actor = actors.SYSTEM_ACTOR

    @property
    def facts(self) -> Mapping[str, Any]:
        """``{"payload": ..., "result": ...}``: the run's facts, as conditions read them."""
        return {"payload": self.payload, "result": self.result}


class Recorder(Protocol):
    """Where :func:`once` keeps its results (the worker gives one per execution)."""

    async def get(self, name: str) -> tuple[bool, Any]: ...

    async def put(self, name: str, value: Any) -> Any: ...


class OutsideAStep(errors.TaskflowError):
    """``steps.once`` was called outside an action the worker runs and outside a hook."""

    code = "STEP_OUTSIDE_ACTION"


_recorder: ContextVar[Recorder | None] = ContextVar("taskflow_step_recorder", default=None)


def recording(recorder: Recorder) -> contextlib.AbstractContextManager[None]:
    """Run the enclosed action with ``recorder`` behind :func:`once` (the worker does this)."""
    return scoped.scoped(_recorder, recorder)


def once(name: str, fn: Callable[[], Any]) -> Any:
    """The first result of ``fn`` for this run under ``name``; later executions get it back.

    In an action, ``await steps.once(name, fn)`` (``fn`` sync or async). In an enter or
    exit hook, ``steps.once(name, fn)`` returns the value itself (``fn`` synchronous): the
    value recorded for the run, else ``fn()``, recorded by the decision that runs the hook
    (written with it, in its transaction; ``core/steps/once.py``). The value must be
    JSON-able (it is stored). Should two executions race, the first recorded value wins.
    """
    hook = hook_once.current()
    if hook is not None:
        return hook.once(name, fn)
    recorder = _recorder.get()
    if recorder is None:
        raise OutsideAStep(
            "steps.once runs only inside an automatic step's action run by the worker, or "
            "an enter/exit hook; call it from there (tests: taskflow.service.steps.steps.run_due)."
        )
    return _in_action(recorder, name, fn)


async def _in_action(recorder: Recorder, name: str, fn: Callable[[], Any]) -> Any:
    found, value = await recorder.get(name)
    if found:
        return value
    made = fn()
    if inspect.isawaitable(made):
        made = await made
    return await recorder.put(name, made)
