"""An awaited start: wait, bounded and holding nothing, until a run is where the caller asked.

The wait listens on the timeline trigger's channel (``store/runs/run_watch.py``): one
LISTEN connection per process while anyone waits (:class:`RunWatch`, opened by the first
waiter, closed when the last one leaves), each waiter re-reading its run on each
notification with a pool connection borrowed for the read only. No transaction and no pool
connection is held while waiting; a notification missed (the listening connection broke or
was closing) costs at most :data:`POLL` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref

from taskflow.core.runs import awaiting
from taskflow.service.common.container import Services
from taskflow.store.common import db
from taskflow.store.runs import run_watch
from taskflow.store.runs import runs as rows

#: The longest a waiter sleeps without a notification before it reads its run again.
POLL = 1.0


class RunWatch:
    """A process's listener on the runs' channel: waiters await :meth:`changed`'s event."""

    def __init__(self, database: db.Database) -> None:
        #: How many waits are under way (the last one out stops listening).
        self.waiters = 0
        self._changed = asyncio.Event()
        self._listener = database.listener(run_watch.CHANNEL, self._wake)

    def _wake(self) -> None:
        # Everyone waiting on the current event wakes; later waiters take a fresh one.
        self._changed.set()
        self._changed = asyncio.Event()

    async def changed(self) -> asyncio.Event:
        """The event set at the next notification (listening first, if not yet)."""
        await self._listener.listen()
        return self._changed

    async def close(self) -> None:
        """Stop listening."""
        await self._listener.close()


_WATCHES: weakref.WeakKeyDictionary[db.Database, RunWatch] = weakref.WeakKeyDictionary()


def watch(database: db.Database) -> RunWatch:
    """The process's :class:`RunWatch` on ``database`` (made at the first wait)."""
    found = _WATCHES.get(database)
    if found is None:
        found = _WATCHES[database] = RunWatch(database)
    return found


async def wait(
    services: Services,
    run_id: str,
    started: tuple[str, int],
    wait_for: awaiting.WaitFor,
    seconds: float,
) -> bool:
    """Wait up to ``seconds`` until run ``run_id``, started in ``started`` (its state and
    visit), is where ``wait_for`` asks; whether it got there (the caller then reads the run
    as it stands)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    watching = watch(services.db)
    watching.waiters += 1
    try:
        while True:
            changed = await watching.changed()  # taken before the read: no change slips by
            async with services.db.connection() as conn:
                run = await rows.get_run(conn, run_id)
                slots = await rows.slots_of_run(conn, run_id) if run is not None else []
            if run is None or awaiting.reached(wait_for, started, run.view, slots):
                return run is not None
            left = deadline - loop.time()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), min(left, POLL))
    finally:
        watching.waiters -= 1
        if not watching.waiters:
            await watching.close()
