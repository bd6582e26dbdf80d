"""The worker's delivery step: webhook deliveries beside the timers, in a task of their own.

Slow or unreachable receivers must never hold timers back, so deliveries run in
their own loop: send a batch, and when none is left due, sleep until the nearest
next try, a NOTIFY from the outbox trigger (a new event committed), or the poll
interval, whichever comes first. Database outages back off as the timer loop does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.service import webhook_delivery
from taskflow.service.container import Services

log = logging.getLogger("taskflow.webhooks")

MAX_BACKOFF = 5.0


class DeliveryLoop:
    """Sends due webhook deliveries until ``stop()``."""

    def __init__(
        self,
        services: Services,
        *,
        poll: float = 1.0,
        sender: webhook_delivery.Sender | None = None,
    ) -> None:
        self.services = services
        self.poll = poll
        self.sender = sender or webhook_delivery.Sender(services)
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._listener: asyncpg.Connection[Any] | None = None

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    async def _listen(self) -> None:
        if self._listener is not None and not self._listener.is_closed():
            return
        self._listener = await self.services.db.dedicated()
        await self._listener.add_listener(webhook_delivery.CHANNEL, lambda *_: self._wake.set())
        self._listener.add_termination_listener(lambda _conn: self._wake.set())

    async def _close_listener(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.close(timeout=1)
            self._listener = None

    async def _sleep(self, now: datetime) -> float:
        due = await webhook_delivery.next_due(self.services)
        if due is None:
            return self.poll
        return max(0.0, min(self.poll, (due - now).total_seconds()))

    async def run(self) -> None:
        """Deliver, wait, repeat; survive database restarts and bugs alike."""
        from taskflow.worker.loop import DATABASE_DOWN

        backoff = 0.1
        try:
            while not self._stop.is_set():
                try:
                    await self._listen()
                    self._wake.clear()
                    now = self.services.clock.now()
                    taken = await self.sender.step(now)
                    backoff = 0.1
                    if taken >= self.sender.settings.concurrency:
                        continue
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), await self._sleep(now))
                except DATABASE_DOWN as exc:
                    log.warning("deliveries paused: database unavailable (%s)", exc)
                    await self._close_listener()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stop.wait(), backoff)
                    backoff = min(backoff * 2, MAX_BACKOFF)
                except Exception:
                    log.exception("unexpected error in the delivery loop; carrying on")
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stop.wait(), MAX_BACKOFF)
        finally:
            await self._close_listener()
            await self.sender.close()
