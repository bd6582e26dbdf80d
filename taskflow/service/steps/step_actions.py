"""The actions of automatic steps: import paths resolved to async functions, checked at load.

``module:function`` (dots allowed in both parts) names an async function taking a
:class:`taskflow.service.steps.authoring.StepContext`. Definitions that name an action which does
not import, or is not an async function, fail when they load (``ACTION_NOT_FOUND``,
``ACTION_NOT_ASYNC``), naming the state and the fix, like every other definition problem.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from taskflow.core.definition import steps as st
from taskflow.core.definition.checks.problems import Problem
from taskflow.core.definition.workflow import Definition

Action = Callable[[Any], Awaitable[Any]]


class ActionNotFound(LookupError):
    """An import path that names no function."""


#: Actions replaced by :func:`faked` (tests), by import path.
_fakes: dict[str, Action] = {}


def resolve(path: str) -> Action:
    """The function at ``module:name`` (a fake while :func:`faked` holds one for it)."""
    return _fakes.get(path) or _imported(path)


@contextlib.contextmanager
def faked(actions: Mapping[str | Callable[..., Any], Action]) -> Iterator[None]:
    """Run workers' steps with these actions instead of the real ones (the testing kit):
    keys are import paths or the real functions, values async functions taking a
    :class:`taskflow.service.steps.authoring.StepContext`. Restored on exit."""
    before = dict(_fakes)
    for key, fake in actions.items():
        path = st.action_path(key)
        assert path is not None
        _fakes[path] = fake
    try:
        yield
    finally:
        _fakes.clear()
        _fakes.update(before)


@functools.cache
def _imported(path: str) -> Action:
    """The function at ``module:name`` (cached); :class:`ActionNotFound` if there is none."""
    module_name, _, name = path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise ActionNotFound(f"module {module_name!r} does not import ({exc})") from exc
    for part in name.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ActionNotFound(f"module {module_name!r} has no {name!r}")
    if not callable(target):
        raise ActionNotFound(f"{path!r} is not a function")
    fn: Action = target
    return fn


def paths(definition: Definition) -> Iterator[tuple[str, str]]:
    """(where, import path) of every action a definition names."""
    for state in definition.states:
        where = f"state {state.name!r}"
        if state.action_path is not None:
            yield where, state.action_path
        for i, every in enumerate(state.every):
            if isinstance(every, st.Every):
                yield f"{where} / every {every.name or i + 1}", every.path
        for i, t in enumerate(state.timeouts):
            for a in t.actions:
                path = st.action_path(a.step)
                if a.kind == "run" and path:
                    yield f"{where} / timeout {t.name or i + 1}", path


def problems(definition: Definition) -> list[Problem]:
    """The actions of ``definition`` that do not resolve to async functions."""
    found = []
    for where, path in paths(definition):
        if not st.well_formed(path):
            continue  # reported by the definition check (BAD_ACTION)
        try:
            fn = resolve(path)
        except ActionNotFound as exc:
            found.append(
                Problem(
                    "ACTION_NOT_FOUND",
                    definition.name,
                    where,
                    f"the action {path!r} cannot be found: {exc}",
                    "name an async function as 'package.module:function', importable where "
                    "the server and workers run",
                    definition.source,
                )
            )
            continue
        if not inspect.iscoroutinefunction(fn):
            found.append(
                Problem(
                    "ACTION_NOT_ASYNC",
                    definition.name,
                    where,
                    f"the action {shown_path(path)!r} is not an async function",
                    "declare it 'async def name(ctx: StepContext) -> ...'",
                    definition.source,
                )
            )
    return found


#: How the modules of workflow files loaded by path are named (``service/versions/definitions.py``).
GENERATED_PREFIX = "taskflow_workflows_"


def shown_path(path: str) -> str:
    """``path`` as an author wrote it: a function of a workflow file loaded by path lives in
    a generated module (``taskflow_workflows_<file>_<hash>``), shown by its name alone
    (load problems, ``Step.action``; ``store/operate/attention.sql`` strips it the same way)."""
    module, _, name = path.partition(":")
    return name if module.startswith(GENERATED_PREFIX) else path


#: What an action may ask for by parameter name, beside the whole context (one parameter).
_BY_NAME = {
    "subject": lambda ctx: ctx.subject,
    "facts": lambda ctx: ctx.facts,
    "idempotency_key": lambda ctx: ctx.idempotency_key,
    "key": lambda ctx: ctx.idempotency_key,
    "attempt": lambda ctx: ctx.attempt,
    "payload": lambda ctx: ctx.payload,
    "result": lambda ctx: ctx.result,
    "ctx": lambda ctx: ctx,
    "context": lambda ctx: ctx,
}
#: The order positional parameters are given in when their names say nothing.
_POSITIONAL = ("subject", "facts", "idempotency_key")


@functools.lru_cache(maxsize=1024)
def _plain_parameters(action: Action) -> tuple[str, ...] | None:
    """The names of the action's plain parameters (read once per action: signatures are
    slow to compute); None when it has no signature to read."""
    try:
        params = inspect.signature(action).parameters.values()
    except (TypeError, ValueError):
        return None
    return tuple(p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))


def invoke(action: Action, ctx: Any) -> Awaitable[Any]:
    """Call ``action`` with what it asks for: one parameter gets the whole
    :class:`taskflow.service.steps.authoring.StepContext`; more get ``subject``, ``facts``,
    ``idempotency_key`` (and ``attempt``, ``payload``, ``result``, ``ctx``) by name, or
    ``(subject, facts, idempotency_key)`` in that order."""
    try:
        plain = _plain_parameters(action)
    except TypeError:  # not hashable: read its signature each time
        plain = _plain_parameters.__wrapped__(action)
    if plain is None or len(plain) <= 1:
        return action(ctx)
    if all(name in _BY_NAME for name in plain):
        return action(**{name: _BY_NAME[name](ctx) for name in plain})  # type: ignore[call-arg]
    positional = [_BY_NAME[name](ctx) for name in _POSITIONAL[: len(plain)]]
    return action(*positional)
