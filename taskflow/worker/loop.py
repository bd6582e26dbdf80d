"""The worker's loop: fire what is due, then sleep until NOTIFY wakes it or the poll interval ends.

With ``TASKFLOW_SCHEDULER=listen`` (the default) a worker holds one extra connection
(``TASKFLOW_DATABASE_LISTEN_URL`` when set) that LISTENs on the timers channel: a use
case arming a timer NOTIFYs it at commit, so a timer due sooner than the next
poll fires on time. After each pass the worker also sleeps only until the
nearest armed due instant, so a timer armed long ago fires when it falls due,
not at the next poll. Polling (at most every ``poll`` seconds, one second by
default) covers the rest: a lost notification, a due timer another worker held
or whose run was busy. "Now" comes from the services' clock, and only from
it: the due check compares the rows with that one instant. With
``TASKFLOW_SCHEDULER=poll`` there is no such connection: a timer armed after a
pass waits for the next poll (``TASKFLOW_SCHEDULER_POLL_SECONDS``).

When the database goes away (a restart, a network cut) the loop logs it, waits
with a growing back-off (capped at a few seconds) and carries on: the pool
replaces broken connections, and the listener is opened again.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta
from typing import Any

from taskflow import errors
from taskflow.core.files import files as fi
from taskflow.service.clocks import feed_outcomes, ics_feeds
from taskflow.service.clocks import timers as firing
from taskflow.service.common import idempotency, outage
from taskflow.service.common.container import Services
from taskflow.service.compose import children as child_lane
from taskflow.service.delivery import mail
from taskflow.service.files import files as file_service
from taskflow.service.operate import retention
from taskflow.service.reports import forecast_watch, metrics
from taskflow.service.steps import steps as step_runner
from taskflow.worker import automations, child_ends, delivery

log = logging.getLogger("taskflow.worker")

#: Errors that mean "the database is not reachable right now", not "a bug" (shared with the
#: delivery lane, so it lives with the other outage rules).
DATABASE_DOWN = outage.DATABASE_DOWN
MAX_BACKOFF = 5.0
#: How often a worker deletes idempotency keys past their retention, and prunes ended runs
#: past theirs (``service/operate/retention.py``).
PRUNE_EVERY = timedelta(hours=1)
RETENTION_EVERY = timedelta(minutes=10)


class Worker:
    """Fires due timers until ``stop()``; several may run against one database."""

    def __init__(
        self,
        services: Services,
        *,
        batch: int = firing.DEFAULT_BATCH,
        poll: float | None = None,
        scheduler: str | None = None,
    ) -> None:
        self.services = services
        self.batch = batch
        #: "listen" or "poll" (``TASKFLOW_SCHEDULER`` unless given).
        self.scheduler = scheduler or services.settings.scheduler
        listening = self.scheduler == "listen"
        # Listening, the poll only catches what a NOTIFY could not say (at most a second);
        # polling alone, it is the operator's trade of lateness for queries.
        if listening:
            self.poll = min(poll or 1.0, 1.0)
        else:
            self.poll = poll or services.settings.scheduler_poll
        self.fired = 0
        #: Attempts of automatic steps this worker ran.
        self.steps = 0
        #: Child-run rows this worker acted on (started, cancelled, read back).
        self.children = 0
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        #: Children's ends read back in a task of their own, woken with the pass.
        self.child_ends = child_ends.ChildEndsLoop(services, batch=batch, poll=self.poll)
        self._listener = services.db.listener(firing.CHANNEL, self._woken, listen=listening)
        self._pruned: datetime | None = None
        self._retained: datetime | None = None
        self._measured: datetime | None = None
        self._watched: datetime | None = None
        #: ``clock.forecast_at_risk`` lines written by the forecast watch.
        self.forecast_alerts = 0
        #: When the holiday feeds were last asked (``_refresh_feeds``).
        self._feeds_at: datetime | None = None
        self._measuring: asyncio.Task[None] | None = None
        #: E-mail (TASKFLOW_SMTP_URL): sent beside the firing, like the metrics snapshot.
        self.mailer = mail.Mailer.of(services)
        self._mailing: asyncio.Task[None] | None = None
        #: Webhook deliveries, in a task of their own beside the timers (worker/delivery.py).
        self.deliveries = delivery.DeliveryLoop(services, poll=self.poll, listen=listening)
        #: Automations deciding on new timeline lines, in a task of their own too.
        self.automations = automations.AutomationLoop(services, poll=self.poll)
        #: Automatic steps: a full batch is finished while the next pass takes more.
        self._steps = step_runner.Pipeline(services)
        #: Passes finished (fired, ran steps, snapshot taken); awaited by ``passes_done``.
        self.passes = 0
        self._passing = False
        self._passed = asyncio.Condition()

    def _woken(self) -> None:
        self._wake.set()
        self.child_ends.wake()

    def stop(self) -> None:
        """Ask the loop to finish after the batch in hand."""
        self._stop.set()
        self._wake.set()
        self.deliveries.stop()
        self.automations.stop()
        self.child_ends.stop()

    async def passes_done(self, n: int) -> None:
        """Return once ``n`` passes have finished since the worker started."""
        async with self._passed:
            await self._passed.wait_for(lambda: self.passes >= n)

    async def until(self, done: Callable[[], bool]) -> None:
        """Return once ``done()`` holds, checked now and at the end of every pass (a wait that
        cannot miss a pass already under way, as counting passes could)."""
        async with self._passed:
            await self._passed.wait_for(done)

    async def next_pass(self) -> None:
        """Return once a pass that began after this call has finished."""
        await self.passes_done(self.passes + (2 if self._passing else 1))

    async def _pass_finished(self) -> None:
        self._passing = False
        async with self._passed:
            self.passes += 1
            self._passed.notify_all()

    async def _sleep(self, now: datetime) -> float:
        """Seconds until the next armed timer falls due, at most the poll interval."""
        dues = [
            d
            for d in (
                await firing.next_due(self.services, now),
                await step_runner.next_due(self.services, now),
            )
            if d is not None
        ]
        if not dues:
            return self.poll
        return min(self.poll, (min(dues) - now).total_seconds())

    async def _snapshot(self, now: datetime) -> None:
        """Start recomputing the gauges of live slots and clocks every
        ``metrics.SNAPSHOT_EVERY``, beside the firing (it reads every live slot: timers must
        not wait for it)."""
        if self._measuring is not None and not self._measuring.done():
            return
        if self._measured is not None and now - self._measured < metrics.SNAPSHOT_EVERY:
            return
        self._measured = now
        self._measuring = asyncio.get_running_loop().create_task(
            self._measure(), context=contextvars.Context()
        )

    async def _watch_forecasts(self, now: datetime) -> None:
        """Every ``forecast_watch.EVERY``, re-forecast a batch of live slots (the least
        recently forecast first) and write ``clock.forecast_at_risk`` where one crossed the
        alert threshold; a failure is logged, never stops the timers."""
        if self._watched is not None and now - self._watched < forecast_watch.EVERY:
            return
        self._watched = now
        try:
            self.forecast_alerts += len(await forecast_watch.watch(self.services, now))
        except DATABASE_DOWN:
            raise
        except Exception:
            log.exception("the forecast watch failed; trying again at its next pass")

    async def _refresh_feeds(self, now: datetime) -> None:
        """Every ``ics_feeds.EVERY``, ask every holiday feed again (conditional GETs); a
        failing feed keeps its last good copy, is logged and shows in needsAttention; a new
        copy is served at once (``service/clocks/feed_outcomes.py``)."""
        if self._feeds_at is not None and now - self._feeds_at < ics_feeds.EVERY:
            return
        self._feeds_at = now
        try:
            await feed_outcomes.ask_every_feed(self.services, now)
        except Exception:
            log.exception("the holiday feeds' refresh failed; trying again at its next pass")

    async def _measure(self) -> None:
        try:
            await metrics.refresh(self.services)
        except DATABASE_DOWN as exc:
            log.warning("metrics snapshot skipped: database unavailable (%s)", exc)
        except Exception:
            # Metrics must never stop timers from firing.
            log.exception("computing the metrics snapshot failed; trying again later")

    def _send_mail(self) -> None:
        """Start a mail pass unless one is running (SMTP must never hold timers back)."""
        if self.mailer is None or (self._mailing is not None and not self._mailing.done()):
            return
        self._mailing = asyncio.get_running_loop().create_task(
            self._mail(self.mailer), context=contextvars.Context()
        )

    async def _mail(self, mailer: mail.Mailer) -> None:
        try:
            while not self._stop.is_set():
                done = await mail.deliver_due(self.services, mailer)
                if done.taken < mail.BATCH:
                    break
        except DATABASE_DOWN as exc:
            log.warning("mail pass skipped: database unavailable (%s)", exc)
        except Exception:
            log.exception("sending mail failed; trying again later")

    async def _sweep_files(self, now: datetime) -> None:
        """Stored files no slot keeps any more go (docs/files.md, "Retention"); a storage
        that does not answer is tried again at the next sweep, the pass goes on."""
        try:
            gone = await file_service.sweep(self.services, now)
        except fi.StorageUnavailable as down:
            log.warning("file retention: %s", down.message)
            return
        if gone:
            log.info("file retention: removed %d files no slot keeps", gone)

    async def run(self) -> None:
        """Fire, wait, repeat; survive database restarts."""
        backoff = 0.1
        sending = asyncio.get_running_loop().create_task(
            self.deliveries.run(), context=contextvars.Context()
        )
        deciding = asyncio.get_running_loop().create_task(
            self.automations.run(), context=contextvars.Context()
        )
        resuming = asyncio.get_running_loop().create_task(
            self.child_ends.run(), context=contextvars.Context()
        )
        try:
            while not self._stop.is_set():
                try:
                    await self._listener.listen()
                    self._wake.clear()
                    self._passing = True
                    now = self.services.clock.now()
                    if self._pruned is None or now - self._pruned >= PRUNE_EVERY:
                        await idempotency.prune(self.services)
                        self._pruned = now
                    if self._retained is None or now - self._retained >= RETENTION_EVERY:
                        self._retained = now
                        await retention.keep_months(self.services, now)
                        if retention.enabled(self.services):
                            await retention.prune_due(self.services, now)
                        await self._sweep_files(now)
                    fired, taken = await firing.fire_batch(self.services, now, self.batch)
                    self.fired += fired
                    # Automatic steps due (some just enqueued by those firings): their
                    # actions run outside any transaction, under a lease.
                    # Their finish is written while the next pass takes more (a full batch).
                    ran = await self._steps.run_batch(now, self.batch)
                    self.steps += ran
                    taken = max(taken, ran)
                    if taken < self.batch:
                        await self._steps.drain()  # the pass ends with its steps written
                    # Child runs to start, cancel or read back (each row once, under its
                    # parent's lock: service/compose/children.py).
                    acted = await child_lane.run_due(self.services, self.batch)
                    self.children += acted
                    taken = max(taken, acted)
                    await self._snapshot(now)
                    await self._watch_forecasts(now)
                    await self._refresh_feeds(now)
                    self._send_mail()
                    await self._pass_finished()
                    backoff = 0.1
                    if taken >= self.batch:
                        continue  # more may be due right now
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), await self._sleep(now))
                except DATABASE_DOWN as exc:
                    log.warning("database unavailable (%s); retrying in %.1fs", exc, backoff)
                    await self._listener.close()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stop.wait(), backoff)
                    backoff = min(backoff * 2, MAX_BACKOFF)
                except errors.Busy as busy:
                    # Lost races only (rolled back whole): the next pass takes the batch again.
                    log.warning("timer batch: %s", busy.message)
                except Exception:
                    # A bug, not an outage: say so loudly, but keep the other timers firing.
                    log.exception("unexpected error in the timer loop; carrying on")
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stop.wait(), MAX_BACKOFF)
        finally:
            self.deliveries.stop()
            self.automations.stop()
            self.child_ends.stop()
            await self._steps.drain()
            await sending
            await deciding
            await resuming
            if self._measuring is not None:
                await self._measuring
            if self._mailing is not None:
                await self._mailing
            await self._listener.close()


@contextlib.asynccontextmanager
async def running(services: Services, **options: Any) -> AsyncIterator[Worker]:
    """A worker running beside other work in this process (``taskflow serve --with-worker``)."""
    worker = Worker(services, **options)
    # A fresh context: nothing of the caller's (a transaction's connection) leaks in.
    task = asyncio.get_running_loop().create_task(worker.run(), context=contextvars.Context())
    try:
        yield worker
    finally:
        worker.stop()
        await task
