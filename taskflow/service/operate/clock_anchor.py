"""Keeping a process on the database's clock (``clock.AnchoredClock``).

Every instant taskflow decides on is compared with instants other processes wrote: a worker
on a host whose clock runs 30 s fast would fire every timer 30 s early. Each process
measures the database's clock at start and again every ``EVERY``, and its clock follows it.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from taskflow import clock
from taskflow.service.common import outage
from taskflow.service.common.container import Services
from taskflow.store.common import server_time

log = logging.getLogger("taskflow.clock")

#: How often the offset is measured again (host clocks drift slowly; NTP may step them).
EVERY = timedelta(seconds=60)
#: An offset beyond this is worth an operator's look (the process keeps working).
NOTABLE = timedelta(seconds=1)


async def anchor(services: Services) -> None:
    """Measure the database's clock and move this process's onto it (a frozen clock of
    tests or previews is left alone)."""
    anchored = services.clock
    if not isinstance(anchored, clock.AnchoredClock):
        return
    offset = await server_time.offset(services.db)
    if abs(offset) >= NOTABLE and abs(offset - anchored.offset) >= NOTABLE:
        log.warning(
            "this host's clock is %.1f s %s the database's; taskflow keeps the database's "
            "time (fix the host's time sync: NTP or chrony)",
            abs(offset.total_seconds()),
            "behind" if offset > timedelta(0) else "ahead of",
        )
    anchored.anchor(offset)


async def keep_anchored(services: Services) -> None:
    """``anchor`` every ``EVERY`` until cancelled; a failed measurement keeps the last one."""
    while True:
        await asyncio.sleep(EVERY.total_seconds())
        try:
            await anchor(services)
        except (*outage.DATABASE_DOWN, TimeoutError) as error:
            log.info("could not read the database's clock (%s); keeping the last offset", error)
