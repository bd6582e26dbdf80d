"""A webhook URL's secrets reach no log record and no stored error (issue 29 item 3).

The endpoint URL carries a token in its query; deliveries succeed, fail and are retried,
are redirected (the ``Location`` carries another token), and are refused by the address
guard. Every record of every logger is captured at DEBUG (httpx's request lines,
httpcore's connection steps, ours), formatted as the real handlers do (text and JSON),
and searched; so is the delivery log the API shows.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import timedelta

import pytest

from taskflow import clock, logs
from taskflow.config.webhook_settings import WebhookSettings
from taskflow.service.common import container
from taskflow.service.delivery import webhook_delivery
from tests.api import test_webhooks_api as hooks
from tests.api import workflows as w
from tests.conftest import asgi_client, with_settings
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio

TOKEN = "tok3n-7f1d2a9c5e-SECRET"
INNER = "inn3r-0b8e4c-SECRET"


async def test_no_record_nor_stored_error_names_the_url_token(
    services: container.Services,
    people: dict[str, str],
    frozen_clock: clock.FrozenClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    logs.install_redaction()  # what logs.configure() does in every process
    caplog.set_level(logging.DEBUG)
    for name in logs.QUIET:  # logs.configure() quiets them; here they speak at DEBUG
        caplog.set_level(logging.DEBUG, logger=name)
    answers = {"hooks.test": ["127.0.0.1"], "inward.test": ["127.0.0.1"]}

    async def resolver(host: str) -> list[str]:
        return answers[host]

    loopback = WebhookSettings(allow_loopback=True, concurrency=4)
    hooked = dataclasses.replace(with_settings(services, webhooks=loopback), resolver=resolver)
    receiver = Receiver().start()
    sender = webhook_delivery.Sender(hooked, jitter=lambda: 0.0)
    try:
        async with asgi_client(hooked) as client:
            base = f"http://hooks.test:{receiver.port}/in"
            urls = [
                f"{base}?token={TOKEN}",
                f"http://user:{TOKEN}@inward.test:{receiver.port}/in?x=1",
            ]
            made = [await hooks.create(client, people["ada"], url) for url in urls]
            assert made[0]["__typename"] == "WebhookEndpointSuccess", made[0]
            assert made[1]["code"] == "INVALID_INPUT"  # userinfo is refused, and not echoed
            assert TOKEN not in made[1]["message"]
            endpoint = made[0]["endpoint"]["id"]

            errors: list[str] = []

            async def send() -> None:
                await hooks.drain(sender, frozen_clock)
                shown = await hooks.deliveries(client, people["ada"], endpoint)
                errors.extend(d["lastError"] for d in shown if d["lastError"])

            async def run(ref: str) -> None:
                await w.start(client, people["app"], "expense-approval", "expense", ref, w.EXPENSE)
                await send()

            await run("S-1")  # delivered
            receiver.answer(500)
            await run("S-2")  # failed, to be retried
            frozen_clock.advance(timedelta(minutes=5))
            await send()  # retried, failed again
            receiver.answer(302)
            receiver.location = f"http://127.0.0.1:1/next?token={INNER}"
            frozen_clock.advance(timedelta(hours=2))
            await send()  # redirected: refused
            receiver.stop()
            receiver.answer(204)
            await run("S-3")  # the receiver is down: a connection error
            answers["hooks.test"] = ["10.0.0.7"]
            frozen_clock.advance(timedelta(hours=2))
            await send()  # the guard refuses the address now
    finally:
        await sender.close()
        receiver.stop()

    assert any(e.startswith("HTTP 500") for e in errors), errors
    assert any("redirects are not followed" in e for e in errors), errors
    assert any(e.startswith("ConnectError") for e in errors), errors
    assert any("10.0.0.7, a private" in e for e in errors), errors
    records = caplog.records
    assert any(r.name == "httpx" for r in records)  # the client's own lines were captured
    assert any("hooks.test" in r.getMessage() and "[redacted]" in r.getMessage() for r in records)
    formatters = [logs.formatter(kind) for kind in logs.FORMATS]
    lines = [f.format(r) for r in records for f in formatters]
    for secret in (TOKEN, INNER):
        assert not [e for e in errors if secret in e]
        assert not [r.getMessage() for r in records if secret in r.getMessage()]
        assert not [line for line in lines if secret in line]
        assert secret not in caplog.text
