"""Sending webhook deliveries: take due ones locked, POST them signed, record the outcomes.

One step (:meth:`Sender.step`) is one transaction: it locks up to
``TASKFLOW_WEBHOOK_CONCURRENCY`` due deliveries (FOR UPDATE SKIP LOCKED; the oldest
pending one per run and endpoint, so a run's events go in order), sends them at once
with httpx (each attempt bounded by ``TASKFLOW_WEBHOOK_TIMEOUT``), and records every
outcome in one statement before it commits. A worker killed mid-send loses nothing:
its connection drops, PostgreSQL rolls the transaction back, and the deliveries are
pending and free for any worker at once (at-least-once; ``webhook-id`` lets receivers
drop the duplicate). No lease to write, nor to wait for.

Signatures follow Standard Webhooks (``standardwebhooks``): ``webhook-id`` is the
event's id, ``webhook-timestamp`` the attempt's wall-clock time (receivers check it
against their own clock, whatever clock drives due times), ``webhook-signature`` one
``v1,`` signature per valid secret (two during a rotation).

Each attempt resolves its endpoint's host once, checks every address, and connects
to one of exactly those (``service/delivery/webhook_net.py``: no DNS rebinding between the
check and the connect). Redirects are not followed: a 3xx answer is a failed attempt
whose next try is checked afresh. Errors stored in the delivery log, like log lines,
name URLs without their query or userinfo.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import httpcore
import httpx
import standardwebhooks

from taskflow import errors
from taskflow.core.delivery import redact, webhook_events
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.service.delivery import webhook_net
from taskflow.store.access import principals as principal_store
from taskflow.store.common import db
from taskflow.store.delivery import webhooks as store

log = logging.getLogger("taskflow.webhooks")

#: The notification channel the outbox trigger wakes workers on.
CHANNEL = "taskflow_webhooks"
USER_AGENT = "taskflow-webhooks/1"


def wall_clock() -> datetime:
    """The real time: what ``webhook-timestamp`` carries."""
    return datetime.now(UTC)


@functools.lru_cache(maxsize=256)
def _signer(secret: str) -> standardwebhooks.Webhook:
    return standardwebhooks.Webhook(secret)


def signed_headers(due: store.Due, body: str, at: datetime, now: datetime) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt of ``due`` sent at ``at``."""
    msg_id = webhook_events.message_id(due.event.id)
    keys = [due.secret]
    if due.previous_secret and due.previous_until is not None and due.previous_until > now:
        keys.append(due.previous_secret)
    signatures = " ".join(_signer(k).sign(msg_id, at, body) for k in keys)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signatures,
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }


class Sender:
    """Delivers due webhooks for one worker (one httpx client, kept between steps).

    ``network`` dials the checked addresses (anyio's sockets unless a test gives its own).
    """

    def __init__(
        self,
        services: Services,
        *,
        network: httpcore.AsyncNetworkBackend | None = None,
        jitter: Callable[[], float] = random.random,
        wall: Callable[[], datetime] = wall_clock,
        batch: int | None = None,
    ) -> None:
        self.services = services
        settings = services.settings.webhooks
        self.settings = settings
        #: Deliveries one step takes (the lanes of a worker split the concurrency).
        self.batch = batch or settings.concurrency
        self.policy = webhook_events.RetryPolicy(
            base=_seconds(settings.backoff_base),
            cap=_seconds(settings.backoff_max),
            horizon=settings.horizon,
        )
        self.client = webhook_net.client(settings, network)
        self.jitter = jitter
        self.wall = wall
        self.delivered = 0

    async def close(self) -> None:
        await self.client.aclose()

    async def step(self, now: datetime) -> int:
        """Take and send one batch of deliveries due at ``now``; how many were taken."""
        settings = self.settings
        disabled: list[str] = []
        async with self.services.db.transaction() as conn:
            due = await store.take_due(conn, now, self.batch)
            if not due:
                return 0
            skipped = await _not_sent(conn, due)
            held = {o.delivery for o in skipped}
            sent = await asyncio.gather(
                *(self._attempt(d, now) for d in due if d.delivery not in held)
            )
            tried = self.services.clock.now()
            done = webhook_events.DeliveryStatus.DELIVERED
            # A skipped delivery was not tried: it says nothing of the endpoint's health.
            answered = [o.endpoint for o in sent if o.status == done]
            failing = [o.endpoint for o in sent if o.status != done]
            await store.record(conn, [*sent, *skipped], tried)
            # Endpoint health changes only on a failure, or a success of a failing endpoint.
            if failing or any(d.failing_since is not None for d in due):
                disabled = await store.endpoint_health(
                    conn, answered, failing, tried, settings.disable_after
                )
        for url in disabled:
            log.warning(
                "webhook endpoint %s disabled: every delivery failed too long",
                redact.redacted_url(url),
            )
        self.delivered += len(answered)
        return len(due)

    async def _checked(self, url: str) -> webhook_net.Pin | str:
        """The addresses this attempt may connect to, resolved and checked now; or why
        none may be (every attempt asks again: a name that turned inward is not sent to)."""
        try:
            return await webhook_net.check_destination(self.settings, url, self.services.resolver)
        except errors.TaskflowError as exc:
            return exc.message

    async def _post(self, due: store.Due, body: str, now: datetime) -> httpx.Response:
        """POST once; again at once when a reused connection was closed under the request
        (the receiver got nothing: its keep-alive ended as the request went out)."""
        for attempt in (1, 2):
            try:
                return await self.client.post(
                    due.url,
                    content=body.encode(),
                    headers=signed_headers(due, body, self.wall(), now),
                )
            except httpx.RemoteProtocolError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _attempt(self, due: store.Due, now: datetime) -> store.Outcome:
        body = webhook_events.body(due.event)
        started = time.perf_counter()
        status: int | None = None
        error: str | None = None
        asked = None
        checked = await self._checked(due.url)
        refused = checked if isinstance(checked, str) else None
        if isinstance(checked, str):
            error = f"refused: {checked}"
        else:
            try:
                # The whole attempt is bounded (httpx's timeout is per phase), and so is the
                # transaction that holds the batch.
                async with asyncio.timeout(self.settings.timeout):
                    with webhook_net.pinned(checked):
                        answer = await self._post(due, body, now)
                status = answer.status_code
                asked = webhook_events.retry_after(answer.headers.get("retry-after"), now)
                if 300 <= status < 400:
                    error = f"HTTP {status}: redirects are not followed"
                elif not 200 <= status < 300:
                    error = f"HTTP {status}"
            except (httpx.HTTPError, TimeoutError) as exc:
                error = f"{type(exc).__name__}: {exc}"
            error = redact.redact_text(error)[:500] if error else None
        latency = (time.perf_counter() - started) * 1000
        if error is None:
            return store.Outcome(
                due.delivery, due.endpoint, "delivered", None, status, None, latency
            )
        next_at = None
        if refused is not None or webhook_events.retryable(status):
            next_at = webhook_events.next_attempt(
                self.policy,
                attempts=due.attempts + 1,
                created_at=due.since,
                now=now,
                jitter=self.jitter(),
                asked=asked,
            )
        state = (
            webhook_events.DeliveryStatus.PENDING if next_at else webhook_events.DeliveryStatus.DEAD
        )
        return store.Outcome(due.delivery, due.endpoint, state, next_at, status, error, latency)


async def _not_sent(conn: db.Connection, due: Sequence[store.Due]) -> list[store.Outcome]:
    """The deliveries of ``due`` whose endpoint's owner may not receive their event now, as
    SKIPPED outcomes saying why (``access.webhook_owner_refusal``): the owners' current
    powers are read in one query per batch, at send time."""
    owners = await principal_store.get_many(conn, sorted({d.owner for d in due}))
    skipped = webhook_events.DeliveryStatus.SKIPPED
    found = []
    for d in due:
        why = access.webhook_owner_refusal(d.owner, owners.get(d.owner), d.event.workflow)
        if why is not None:
            found.append(store.Outcome(d.delivery, d.endpoint, skipped, None, None, why, 0.0))
    return found


def _seconds(value: float) -> timedelta:
    return timedelta(seconds=value)


async def next_due(services: Services) -> datetime | None:
    """The nearest next try of a pending delivery (the worker sleeps until then)."""
    async with services.db.connection() as conn:
        return await store.next_due(conn)
