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
  stored on the run and read with it by every later decision (:func:`check_result`). NaN,
  infinities and U+0000, which PostgreSQL's ``jsonb`` refuses, fail the attempt (they
  would otherwise fail the write of the whole batch, every time it is retried).
- An error whose ``__str__`` fails is recorded by its class; U+0000 in an error's message
  or traceback is written as ``\\x00`` (:func:`message`, :func:`storable`).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
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


#: Set when this process was told to stop (``cli/runtime.exit_on_sigterm``): its signal
#: handler raises ``SystemExit`` in whatever code runs, an action's too; that one stops the
#: process and is no failure of the action.
PROCESS_STOPPING = threading.Event()


async def contained(awaitable: Awaitable[T]) -> T:
    """Await an action; ``SystemExit`` and ``KeyboardInterrupt`` it raises come out as
    :class:`Escaped` (unless the process is stopping: see :data:`PROCESS_STOPPING`)."""
    try:
        return await awaitable
    except (SystemExit, KeyboardInterrupt) as exc:
        if PROCESS_STOPPING.is_set():
            raise
        raise Escaped(exc) from exc


class Watchdog:
    """Per-attempt timeouts of the actions one task runs one after the other (a worker's
    runner), as ``asyncio.timeout`` gives them but with ONE timer for them all:
    ``asyncio.timeout`` schedules and cancels a timer per action, which costs more than an
    action that returns at once. ``async with watchdog.within(seconds):`` around an action:
    past its limit the task is cancelled and the block ends with :class:`TimeoutError`
    (a cancellation from elsewhere, the worker stopping, stays a cancellation).

    The timer is due at or before the deadline of the attempt under way: when it fires
    before that deadline (it was set for an earlier attempt) it is set again for it, and
    between attempts it does nothing. :meth:`close` drops it when the task is done.
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task: asyncio.Task[Any] | None = None
        self._seconds = 0.0
        #: The deadline of the attempt under way (None between attempts).
        self._deadline: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._expired = False
        self._cancelling = 0

    def within(self, seconds: float) -> Watchdog:
        """The next attempt's limit (use as ``async with watchdog.within(seconds):``)."""
        self._seconds = seconds
        return self

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        assert task is not None, "a watchdog watches a task"
        self._task, self._cancelling, self._expired = task, task.cancelling(), False
        deadline = self._deadline = self._loop.time() + self._seconds
        if self._timer is None or self._timer.when() > deadline:
            self.close()
            self._timer = self._loop.call_at(deadline, self._fire)

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        self._deadline = None
        if self._expired:  # as asyncio.timeout: ours unless the task was cancelled besides
            self._expired = False
            assert self._task is not None
            if self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
                raise TimeoutError from exc

    def _fire(self) -> None:
        timer, self._timer = self._timer, None
        if self._deadline is None or timer is None:
            return  # between attempts: the next one sets its own
        if timer.when() < self._deadline:  # set for an earlier attempt
            self._timer = self._loop.call_at(self._deadline, self._fire)
            return
        assert self._task is not None
        self._expired = True
        self._task.cancel()

    def close(self) -> None:
        """Drop the timer (the task is done with its attempts)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def stopping() -> bool:
    """True when the current task itself is being cancelled (the worker stops)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class StepValueInvalid(errors.TaskflowError):
    """An action returned (or gave ``steps.once``) a value PostgreSQL's JSON cannot hold."""

    code = "STEP_VALUE_INVALID"


#: ``\u0000`` in encoded JSON (not an escaped backslash followed by ``u0000``).
_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


#: ``json.dumps(value, allow_nan=False)``, its encoder made once (dumps makes one per call).
_STRICT = json.JSONEncoder(allow_nan=False)


def encoded(value: Any, what: str) -> str:
    """``value`` as the JSON the database will store; :class:`StepValueInvalid` for what it
    cannot (NaN and infinities, the character U+0000), raised inside the attempt so that it
    fails that attempt alone instead of the batch's write."""
    try:
        text = _STRICT.encode(value)
    except ValueError as exc:  # NaN, Infinity
        raise StepValueInvalid(
            f"{what} holds NaN or Infinity, which JSON cannot store ({exc}): "
            "use null or a string instead"
        ) from exc
    if _NUL.search(text):
        raise StepValueInvalid(
            f"{what} holds the character U+0000, which PostgreSQL cannot store: "
            "strip it (text.replace('\\x00', '')) or encode binary data as base64"
        )
    return text


def check_result(value: Any, limit: int) -> None:
    """Refuse a result that is not JSON, or not storable, or larger than ``limit`` bytes once
    encoded."""
    size = len(encoded(value, "the action's result").encode())
    if size > limit:
        raise StepResultTooLarge(
            f"the action returned {size} bytes of JSON, more than a run keeps "
            f"(TASKFLOW_MAX_DOCUMENT_BYTES = {limit}): return a reference (an id, a URL) "
            "to the data instead of the data"
        )


def message(error: BaseException) -> str:
    """``str(error)``, or "" when its ``__str__`` fails (see :func:`storable`)."""
    try:
        return storable(str(error))
    except Exception:
        return ""


def storable(text: str) -> str:
    """``text`` with U+0000 (which a PostgreSQL text column refuses) written as ``\\x00``."""
    return text.replace("\x00", "\\x00")


#: The longest ``steps.once`` name (the ``step_once.name`` column).
ONCE_NAME_CHARS = 200


def once_value(name: str, value: Any) -> None:
    """Refuse, before anything is written, a ``steps.once`` record the database cannot hold."""
    if len(name) > ONCE_NAME_CHARS:
        raise StepValueInvalid(
            f"steps.once: the name {name[:40]!r}... has {len(name)} characters, more than "
            f"{ONCE_NAME_CHARS}: use a short name (it is kept per run)"
        )
    encoded(value, f"the value of steps.once({name!r})")
