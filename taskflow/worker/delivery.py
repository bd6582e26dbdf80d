"""The worker's delivery step: webhook deliveries beside the timers, in a task of their own.

Slow or unreachable receivers must never hold timers back, so deliveries run in
their own loop: send a batch, and when none is left due, sleep until the nearest
next try, a NOTIFY from the outbox trigger (a new event committed), or the poll
interval, whichever comes first. Database outages back off as the timer loop does.

Two lanes run that loop side by side (:data:`LANES`), each with batches of half
``TASKFLOW_WEBHOOK_CONCURRENCY``: while one waits for the slowest answer of its
batch, the other takes and sends the next one (SKIP LOCKED keeps them apart; a
run's next event waits for the previous one either way).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from datetime import datetime

from taskflow.service.common import outage
from taskflow.service.common.container import Services
from taskflow.service.delivery import webhook_delivery

log = logging.getLogger("taskflow.webhooks")

MAX_BACKOFF = 5.0
#: Batches one worker has in flight at once.
LANES = 2


class DeliveryLoop:
    """Sends due webhook deliveries until ``stop()``."""

    def __init__(
        self,
        services: Services,
        *,
        poll: float = 1.0,
        sender: webhook_delivery.Sender | None = None,
        listen: bool = True,
    ) -> None:
        self.services = services
        self.poll = poll
        batch = max(1, services.settings.webhooks.concurrency // LANES)
        self.sender = sender or webhook_delivery.Sender(services, batch=batch)
        self._wakes = [asyncio.Event() for _ in range(LANES)]
        self._stop = asyncio.Event()
        # One listener for both lanes.
        self._listener = services.db.listener(
            webhook_delivery.CHANNEL, self._wake_all, listen=listen
        )

    def stop(self) -> None:
        self._stop.set()
        self._wake_all()

    def _wake_all(self, *_: object) -> None:
        for wake in self._wakes:
            wake.set()

    async def _sleep(self, now: datetime) -> float:
        due = await webhook_delivery.next_due(self.services)
        if due is None:
            return self.poll
        return max(0.0, min(self.poll, (due - now).total_seconds()))

    async def run(self) -> None:
        """Run the lanes until ``stop()``."""
        loop = asyncio.get_running_loop()
        lanes = [
            loop.create_task(self._lane(wake), context=contextvars.Context())
            for wake in self._wakes
        ]
        try:
            await asyncio.gather(*lanes)
        finally:
            await self._listener.close()
            await self.sender.close()

    async def _lane(self, wake: asyncio.Event) -> None:
        """Deliver, wait, repeat; survive database restarts and bugs alike."""
        backoff = 0.1
        while not self._stop.is_set():
            try:
                await self._listener.listen()
                wake.clear()
                now = self.services.clock.now()
                taken = await self.sender.step(now)
                backoff = 0.1
                if taken >= self.sender.batch:
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), await self._sleep(now))
            except outage.DATABASE_DOWN as exc:
                log.warning("deliveries paused: database unavailable (%s)", exc)
                await self._listener.close()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)
            except Exception:
                log.exception("unexpected error in the delivery loop; carrying on")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), MAX_BACKOFF)
