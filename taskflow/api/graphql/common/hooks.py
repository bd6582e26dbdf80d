"""The schema extensions' hooks run without strawberry's per-request wrapping.

strawberry's runner, for each of a request's four stages (operation, parsing, validation,
execution), looks up each extension's hook, checks what kind of function it is, wraps it
in a fresh ``contextlib.contextmanager`` (``functools.update_wrapper`` included) and enters
it through an ``ExitStack``: per request, work that depends only on the extension's
class. :class:`Hooks` does that lookup once per class and stage and enters the one
generator context manager directly. It serves schemas whose extensions' hooks are all
plain generator functions (ours: ``guards.Gate``); anything else keeps strawberry's
runner (:func:`runner_for`). The hooks run in the same order, with the same exception
handling (``contextlib``'s), so answers, errors, logs and metrics are the same.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from types import TracebackType
from typing import Any

from strawberry.extensions import SchemaExtension
from strawberry.extensions.runner import SchemaExtensionsRunner
from strawberry.types import ExecutionContext

#: A stage's hook of one extension class, as a context manager factory.
Factory = Callable[[SchemaExtension], contextlib.AbstractContextManager[None]]
STAGES = ("on_operation", "on_parse", "on_validate", "on_execute")
#: Each (extension class, stage) looked up: its factory, None for the default (nothing to
#: run), or absent from it and in _OTHER when the hook is no plain generator function.
_FACTORIES: dict[tuple[type[SchemaExtension], str], Factory | None] = {}
_OTHER: set[tuple[type[SchemaExtension], str]] = set()


def _served(kind: type[SchemaExtension], stage: str) -> bool:
    """Whether ``kind``'s hook for ``stage`` is the default or a plain generator function
    (then :data:`_FACTORIES` holds it, looked up once)."""
    key = (kind, stage)
    if key in _FACTORIES:
        return True
    if key in _OTHER:
        return False
    found = getattr(kind, stage)
    if found is getattr(SchemaExtension, stage):
        _FACTORIES[key] = None
    elif inspect.isgeneratorfunction(found):
        _FACTORIES[key] = contextlib.contextmanager(found)
    else:
        _OTHER.add(key)
        return False
    return True


class _Stage:
    """One stage's hook (or none) for ``with`` and ``async with`` alike. As strawberry's
    runner, it never suppresses an exception, whatever the hook's exit answers."""

    __slots__ = ("_entered",)

    def __init__(self, entered: contextlib.AbstractContextManager[None] | None) -> None:
        self._entered = entered

    def __enter__(self) -> None:
        if self._entered is not None:
            self._entered.__enter__()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._entered is not None:
            self._entered.__exit__(kind, error, trace)

    async def __aenter__(self) -> None:
        self.__enter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.__exit__(kind, error, trace)


class Hooks(SchemaExtensionsRunner):
    """strawberry's runner for one extension whose hooks are plain generator functions."""

    def _stage(self, stage: str) -> Any:
        extension = self.extensions[0]
        factory = _FACTORIES[type(extension), stage]
        return _Stage(None if factory is None else factory(extension))

    def operation(self) -> Any:
        return self._stage("on_operation")

    def parsing(self) -> Any:
        return self._stage("on_parse")

    def validation(self) -> Any:
        return self._stage("on_validate")

    def executing(self) -> Any:
        return self._stage("on_execute")


def handled(extensions: list[SchemaExtension]) -> bool:
    """Whether :class:`Hooks` runs ``extensions``: one, every hook a generator or default."""
    return len(extensions) == 1 and all(_served(type(extensions[0]), s) for s in STAGES)


def runner_for(
    context: ExecutionContext, extensions: list[SchemaExtension]
) -> SchemaExtensionsRunner:
    """:class:`Hooks` where it serves, strawberry's runner otherwise."""
    if handled(extensions):
        return Hooks(execution_context=context, extensions=extensions)
    return SchemaExtensionsRunner(execution_context=context, extensions=extensions)
