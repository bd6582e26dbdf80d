"""The worker's automation lane, in a task of its own beside the timers.

Deciding on events for many published automations must never hold a timer back, so the
lane runs its own loop (as webhook deliveries do): take a batch of queued timeline lines
and decide each for every automation listening to it (``service/automations/acting.py``),
and when fewer than a batch were due, sleep for the poll interval. Database outages back
off as the timer loop does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from taskflow.service.automations import acting
from taskflow.service.common import outage
from taskflow.service.common.container import Services

log = logging.getLogger("taskflow.automations")

MAX_BACKOFF = 5.0


class AutomationLoop:
    """Decides automations on new timeline lines until ``stop()``."""

    def __init__(self, services: Services, *, poll: float = 1.0) -> None:
        self.services = services
        self.poll = poll
        #: Queued lines this worker took (each decided for all its automations).
        self.decided = 0
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        backoff = 0.1
        while not self._stop.is_set():
            try:
                taken = await acting.run_due(self.services)
                self.decided += taken
                backoff = 0.1
                if taken >= acting.BATCH:
                    continue
                wait = self.poll
            except outage.DATABASE_DOWN as exc:
                log.warning("automations paused: database unavailable (%s)", exc)
                wait, backoff = backoff, min(backoff * 2, MAX_BACKOFF)
            except Exception:
                log.exception("unexpected error in the automation lane; carrying on")
                wait = MAX_BACKOFF
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), wait)
