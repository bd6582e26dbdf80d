"""``steps.once`` inside an enter or exit hook: the recorded values, kept by the decision.

A hook runs while the engine decides, so the engine may read no database and no
clock: the run's recorded once-values come loaded with the run (``RunView.once``),
and a value recorded for the first time is kept by the :class:`Decision` and
travels in its outcome (``Outcome.once``), with a ``step.once`` timeline line, to
be written by the unit of work in the same transaction. ``fn`` runs inside that
transaction, synchronously, and again if the decision is tried again before
anything was committed (a lost race); once a value is committed, it is returned.

:func:`recording` is what the engine wraps a hook call in; ``taskflow.service.steps.authoring.once``
asks :func:`current` whether it runs inside a hook.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from taskflow import errors
from taskflow.core.common import scoped

if TYPE_CHECKING:
    from taskflow.core.runs.decision import Decision


class OnceNotSync(errors.TaskflowError):
    """In a hook, ``steps.once`` was given a function that returns an awaitable."""

    code = "STEP_ONCE_NOT_SYNC"


class OnceNotJson(errors.TaskflowError):
    """``steps.once`` was given a function whose value cannot be stored as JSON."""

    code = "STEP_ONCE_NOT_JSON"


@dataclass(frozen=True)
class InHook:
    """``steps.once`` for the hook of ``state`` (``which``: enter or exit) being run."""

    decision: Decision
    state: str
    which: str

    def once(self, name: str, fn: Callable[[], Any]) -> Any:
        """The value recorded as ``name`` for the run, else ``fn()`` recorded by this decision."""
        decision = self.decision
        if name in decision.once:
            return decision.once[name]
        if name in decision.run.once:
            return decision.run.once[name]
        value = fn()
        if inspect.isawaitable(value):
            if inspect.iscoroutine(value):
                value.close()
            raise OnceNotSync(
                f"steps.once({name!r}) in the {self.which} hook of {self.state!r}: a hook is "
                "synchronous, so fn must return the value itself; await-able work belongs in "
                "an action (State(action=...)), where steps.once is awaited."
            )
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise OnceNotJson(
                f"steps.once({name!r}): the value must be JSON-able to be stored ({exc})."
            ) from exc
        decision.once[name] = value
        decision.log(
            "step.once",
            reason=f"recorded {name!r} once for the run",
            name=name,
            value=value,
            hook=self.which,
            state=self.state,
        )
        return value


_hook: ContextVar[InHook | None] = ContextVar("taskflow_hook_once", default=None)


def recording(
    decision: Decision, state: str, which: str
) -> contextlib.AbstractContextManager[None]:
    """Run the enclosed hook call with ``steps.once`` answered from ``decision``."""
    return scoped.scoped(_hook, InHook(decision, state, which))


def current() -> InHook | None:
    """The hook being run, if ``steps.once`` is called from one."""
    return _hook.get()
