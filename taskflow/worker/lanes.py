"""How a worker's lane in a task of its own keeps taking work (automations, children's ends):
again at once after a full batch, else after a wake-up or the poll interval; a database
outage backs off as the timer loop does, a bug is logged and the lane carries on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from taskflow.service.common import outage

MAX_BACKOFF = 5.0


async def keep_taking(
    take: Callable[[], Awaitable[int]],
    batch: int,
    *,
    poll: float,
    stop: asyncio.Event,
    log: logging.Logger,
    names: tuple[str, str],
    wake: asyncio.Event | None = None,
) -> None:
    """Run ``take`` (one pass of the lane: how many items it took) until ``stop`` is set.
    ``wake`` (set with ``stop`` too) ends a wait early; ``names``: what the lane is called
    when it pauses and in its error lines."""
    paused, lane = names
    backoff = 0.1
    while not stop.is_set():
        if wake is not None:
            wake.clear()
        try:
            taken = await take()
            backoff = 0.1
            if taken >= batch:
                continue
            wait = poll
        except outage.DATABASE_DOWN as exc:
            log.warning("%s paused: database unavailable (%s)", paused, exc)
            wait, backoff = backoff, min(backoff * 2, MAX_BACKOFF)
        except Exception:
            log.exception("unexpected error in the %s lane; carrying on", lane)
            wait = MAX_BACKOFF
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for((wake or stop).wait(), wait)
