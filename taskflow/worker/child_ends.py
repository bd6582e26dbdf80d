"""The worker's lane of children's ends, in a task of its own beside the timer pass.

A parent waiting on its last child is resumed as soon as that child's end commits: the
trigger that marks the child's row ``ended`` NOTIFYs the workers, and this lane, woken by
the worker's listener, reads the ends (and cancels) back a parent at a time
(``service/compose/children.run_due(starts=False)``), without waiting behind the pass's
step batch and children's starts (docs/composition.md, "A parent at a time"). The pass still
acts on every row due too (any worker may act on any row: each under its parent's lock).
"""

from __future__ import annotations

import asyncio
import logging

from taskflow.service.common.container import Services
from taskflow.service.compose import children as child_lane
from taskflow.worker import lanes

log = logging.getLogger("taskflow.child_ends")


class ChildEndsLoop:
    """Reads children's ends back, resuming their parents, until ``stop()``."""

    def __init__(self, services: Services, *, batch: int, poll: float = 1.0) -> None:
        self.services = services
        self.batch = batch
        self.poll = poll
        #: Rows this lane acted on (ends read back, children cancelled).
        self.acted = 0
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()

    def wake(self) -> None:
        """Something committed that may have ended a child: look now."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    async def run(self) -> None:
        await lanes.keep_taking(
            self._take,
            self.batch,
            poll=self.poll,
            stop=self._stop,
            wake=self._wake,
            log=log,
            names=("child ends", "child ends"),
        )

    async def _take(self) -> int:
        taken = await child_lane.run_due(self.services, self.batch, starts=False)
        self.acted += taken
        return taken
