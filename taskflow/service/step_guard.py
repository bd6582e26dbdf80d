"""What the worker does about an action that misbehaves, so that one action never takes
down its worker or the batch it runs in (docs/automatic-steps.md, "What counts as a
failure").

- An action that raises ``SystemExit`` or ``KeyboardInterrupt`` (``sys.exit()`` in a
  library, say) would stop the worker's event loop: asyncio re-raises both out of the
  task that ran them. :func:`contained` turns them into :class:`Escaped` inside that
  task, and the attempt records the original as an ordinary failure.
- An action that raises ``asyncio.CancelledError`` itself (the worker is not stopping)
  failed like any other: :func:`stopping` tells the two apart.
- A result must be JSON and at most ``TASKFLOW_MAX_DOCUMENT_BYTES`` once encoded: it is
  stored on the run and read with it by every later decision (:func:`check_result`).
- An error whose ``__str__`` fails is recorded by its class (:func:`message`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from typing import Any, TypeVar

from taskflow import errors

T = TypeVar("T")


class Escaped(Exception):
    """``SystemExit`` or ``KeyboardInterrupt`` raised by an action, carried out of its task."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(type(error).__name__)
        self.error = error


class StepResultTooLarge(errors.TaskflowError):
    """An action returned more than a run may keep."""

    code = "STEP_RESULT_TOO_LARGE"


async def contained(awaitable: Awaitable[T]) -> T:
    """Await an action; ``SystemExit`` and ``KeyboardInterrupt`` come out as :class:`Escaped`."""
    try:
        return await awaitable
    except (SystemExit, KeyboardInterrupt) as exc:
        raise Escaped(exc) from exc


def stopping() -> bool:
    """True when the current task itself is being cancelled (the worker stops)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def check_result(value: Any, limit: int) -> None:
    """Refuse a result that is not JSON or larger than ``limit`` bytes once encoded."""
    size = len(json.dumps(value).encode())
    if size > limit:
        raise StepResultTooLarge(
            f"the action returned {size} bytes of JSON, more than a run keeps "
            f"(TASKFLOW_MAX_DOCUMENT_BYTES = {limit}): return a reference (an id, a URL) "
            "to the data instead of the data"
        )


def message(error: BaseException) -> str:
    """``str(error)``, or "" when its ``__str__`` fails."""
    try:
        return str(error)
    except Exception:
        return ""
