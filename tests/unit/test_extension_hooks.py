"""The schema's extension hooks run by :mod:`taskflow.api.graphql.common.hooks` as strawberry's own
runner runs them: same order, same exception handling, for ``with`` and ``async with``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from strawberry.extensions import SchemaExtension
from strawberry.extensions.runner import SchemaExtensionsRunner

from taskflow.api.graphql.common import hooks
from taskflow.api.graphql.common.guards import Gate
from taskflow.api.graphql.schema import build_schema


class Recording(SchemaExtension):
    """Notes each stage's entry and exit (and an error seen); its operation hook swallows
    ``KeyError`` (which the runner raises all the same)."""

    def __init__(self, notes: list[str]) -> None:
        self.notes = notes

    def on_operation(self) -> Iterator[None]:
        self.notes.append("operation in")
        try:
            yield
        except KeyError:
            self.notes.append("operation swallowed")
            return
        except ValueError:
            self.notes.append("operation saw ValueError")
            raise
        self.notes.append("operation out")

    def on_validate(self) -> Iterator[None]:
        self.notes.append("validate in")
        yield
        self.notes.append("validate out")

    def on_execute(self) -> Iterator[None]:
        self.notes.append("execute in")
        yield
        self.notes.append("execute out")


class AsyncHook(SchemaExtension):
    async def on_execute(self) -> AsyncIterator[None]:
        yield


async def _run(
    runner: SchemaExtensionsRunner, notes: list[str], fail: type[Exception] | None
) -> None:
    async with runner.operation():
        async with runner.parsing():
            notes.append("parse")
        async with runner.validation():
            notes.append("validate")
        with runner.executing():
            notes.append("execute")
            if fail is not None:
                raise fail("boom")


@pytest.mark.parametrize("fail", [None, KeyError, ValueError])
def test_hooks_run_as_strawberrys_runner_runs_them(fail: type[Exception] | None) -> None:
    seen: dict[str, tuple[list[str], str]] = {}
    for name in ("strawberry", "ours"):
        notes: list[str] = []
        extension = Recording(notes)
        runner: SchemaExtensionsRunner
        if name == "ours":
            runner = hooks.runner_for(None, [extension])  # type: ignore[arg-type]
            assert isinstance(runner, hooks.Hooks)
        else:
            runner = SchemaExtensionsRunner(None, [extension])  # type: ignore[arg-type]
        try:
            asyncio.run(_run(runner, notes, fail))
            outcome = "returned"
        except Exception as error:
            outcome = type(error).__name__
        seen[name] = (notes, outcome)
    assert seen["ours"] == seen["strawberry"]
    # strawberry's runner never suppresses an exception, even one a hook swallowed.
    assert seen["ours"][1] == ("returned" if fail is None else fail.__name__)


def test_other_extensions_keep_strawberrys_runner() -> None:
    runner: Any = hooks.runner_for(None, [AsyncHook()])  # type: ignore[arg-type]
    assert type(runner) is SchemaExtensionsRunner
    two: Any = hooks.runner_for(None, [Recording([]), Recording([])])  # type: ignore[arg-type]
    assert type(two) is SchemaExtensionsRunner


def test_the_schemas_one_extension_is_run_by_hooks() -> None:
    schema = build_schema()
    extensions = schema.get_extensions()
    assert [type(e) for e in extensions] == [Gate]
    assert hooks.handled(extensions)
