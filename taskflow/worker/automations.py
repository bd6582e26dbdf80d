"""The worker's automation lane, in a task of its own beside the timers.

Deciding on events for many published automations must never hold a timer back, so the
lane runs its own loop (as webhook deliveries do): take a batch of queued timeline lines
and decide each for every automation listening to it (``service/automations/acting.py``),
and when fewer than a batch were due, sleep for the poll interval. Database outages back
off as the timer loop does.
"""

from __future__ import annotations

import asyncio
import logging

from taskflow.service.automations import acting
from taskflow.service.common.container import Services
from taskflow.worker import lanes

log = logging.getLogger("taskflow.automations")


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
        await lanes.keep_taking(
            self._take,
            acting.BATCH,
            poll=self.poll,
            stop=self._stop,
            log=log,
            names=("automations", "automation"),
        )

    async def _take(self) -> int:
        taken = await acting.run_due(self.services)
        self.decided += taken
        return taken
