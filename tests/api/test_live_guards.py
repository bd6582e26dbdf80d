"""The guards of /graphql's socket: authentication on connection_init and re-checked,
the HTTP route's limits, caps per connection and per principal, resume (docs/live.md)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import asyncpg
import httpx
import pytest

from taskflow.api import limits as edge
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.live import topics
from tests.api import live as lv
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

SIGN_OUT = "mutation { signOutEverywhere(input: {}) { __typename } }"


@contextlib.asynccontextmanager
async def _fiona_on(
    services: container.Services, people: dict[str, str], **options: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, lv.Live]]:
    """An app client with the socket ``options`` (``lv.app_client``), and Fiona connected."""
    async with (
        lv.app_client(services, **options) as client,
        lv.connect(client, people["fiona"]) as fiona,
    ):
        yield client, fiona


@pytest.mark.parametrize("token", ["not-a-token", None])
async def test_a_bad_token_closes_the_socket_at_connection_init(
    client: httpx.AsyncClient, people: dict[str, str], token: str | None
) -> None:
    async with lv.connect(client, None, init=False) as live:
        payload = {"Authorization": f"Bearer {token}"} if token else {}
        await live.send({"type": "connection_init", "payload": payload})
        await lv.closes(live, 4401, "Unauthorized")


async def test_an_operation_over_the_cost_limit_is_refused_before_it_runs(
    services: container.Services, people: dict[str, str]
) -> None:
    async with _fiona_on(services, people, limits=edge.Limits(max_query_cost=3)) as (client, fiona):
        await fiona.subscribe("1", lv.INBOX)
        refused = await fiona.next()
        assert refused["type"] == "error", refused
        assert refused["payload"][0]["extensions"]["code"] == "QUERY_TOO_COSTLY"
        assert lv.live_hub.hub_for(client.services).groups == {}  # type: ignore[attr-defined]


async def test_queries_and_mutations_go_over_http_not_the_socket(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    async with lv.connect(client, people["max"]) as live:
        await live.subscribe("1", SIGN_OUT)
        refused = await live.next()
        assert refused["type"] == "error", refused
    # The mutation never ran: max's token still works.
    me = await gql(client, "{ me { id } }", token=people["max"])
    assert me.error_codes == []


async def test_too_many_subscriptions_or_connections_are_refused_clearly(
    services: container.Services, people: dict[str, str]
) -> None:
    async with _fiona_on(services, people, max_subscriptions=2, max_connections=1) as (
        client,
        fiona,
    ):
        for op in ("1", "2", "3"):
            await fiona.subscribe(op, lv.INBOX)
        refused = await fiona.next()
        assert refused["id"] == "3"
        assert refused["type"] == "error"
        error = refused["payload"][0]
        assert error["extensions"]["code"] == "LIMIT_EXCEEDED"
        assert "at most 2" in error["message"]
        async with lv.connect(client, people["fiona"], init=False) as second:
            await second.send(
                {
                    "type": "connection_init",
                    "payload": {"Authorization": "Bearer " + people["fiona"]},
                }
            )
            await lv.closes(second, 4429, "at most 1 per principal")
        # The first connection is untouched: it still answers a ping.
        await fiona.send({"type": "ping"})
        assert (await fiona.next())["type"] == "pong"


async def test_a_token_revoked_mid_stream_closes_the_socket(
    services: container.Services, people: dict[str, str]
) -> None:
    async with _fiona_on(services, people, recheck_interval=0.1) as (client, fiona):
        await fiona.subscribe("1", lv.INBOX)
        await lv.subscribed(client.services, 1)  # type: ignore[attr-defined]
        signed_out = await gql(client, SIGN_OUT, token=people["fiona"])
        assert signed_out.error_codes == []
        await lv.closes(fiona, 4403, "revoked")


async def test_resuming_with_a_cursor_misses_nothing(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    await w.start_expense(client, people["app"], "EXP-RESUME-1")
    await w.start_expense(client, people["app"], "EXP-RESUME-2")
    first = await w.slot_named(client, people["frank"], "finance_review", "EXP-RESUME-1")
    second = await w.slot_named(client, people["frank"], "finance_review", "EXP-RESUME-2")
    async with lv.connect(client, people["frank"]) as frank:
        await frank.subscribe("1", lv.INBOX)
        await lv.subscribed(services, 1)
        await w.claim(client, people["fiona"], first["id"])
        seen = await frank.next()
        cursor = seen["payload"]["data"]["inboxChanged"]["cursor"]
    # Away: the second slot is claimed by someone else.
    await w.claim(client, people["fiona"], second["id"])
    async with lv.connect(client, people["frank"]) as frank:
        await frank.subscribe("1", lv.INBOX, {"after": cursor})
        missed = (await frank.next())["payload"]["data"]["inboxChanged"]
    assert missed["slotId"] == second["id"]
    assert missed["slot"] is None
    assert int(missed["cursor"]) > int(cursor)


async def test_a_cursor_older_than_the_window_is_refused(
    services: container.Services, people: dict[str, str]
) -> None:
    async with lv.app_client(services, resume_window=1) as client:
        await w.start_expense(client, people["app"], "EXP-RESUME-3")
        async with lv.connect(client, people["frank"]) as frank:
            await frank.subscribe("1", lv.INBOX, {"after": "0"})
            refused = await frank.next()
    assert refused["type"] == "error"
    assert refused["payload"][0]["extensions"]["code"] == "CURSOR_EXPIRED"
    assert "read the list again" in refused["payload"][0]["message"]


async def test_a_silent_connection_is_pinged_then_closed_when_idle(
    services: container.Services, people: dict[str, str]
) -> None:
    async with _fiona_on(services, people, ping_interval=0.1, idle_timeout=0.5) as (_client, fiona):
        with anyio.fail_after(1):
            ping = json.loads(await fiona.ws.receive_text())
        assert ping == {"type": "ping"}
        await lv.closes(fiona, 4408, "idle")


async def test_connection_init_must_come_in_time(
    services: container.Services, people: dict[str, str]
) -> None:
    async with (
        lv.app_client(services, init_timeout=0.2) as client,
        lv.connect(client, None, init=False) as silent,
    ):
        await lv.closes(silent, 4408)


async def test_a_message_over_the_size_cap_closes_the_socket(
    services: container.Services, people: dict[str, str]
) -> None:
    async with _fiona_on(services, people, limits=edge.Limits(max_body_bytes=2000)) as (
        _client,
        fiona,
    ):
        await fiona.subscribe("1", lv.INBOX + " " * 3000)
        await lv.closes(fiona, 1009, "at most 2000 bytes")


async def test_a_subscriber_that_does_not_read_is_dropped_not_buffered(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    hub = lv.live_hub.hub_for(services)
    fiona = await principal_service.authenticate(services, people["fiona"])
    dropped = anyio.Event()
    sub = await hub.subscribe(
        topics.Topic(topics.INBOX), fiona, after=None, max_queued=2, window=10, dropped=dropped.set
    )
    try:
        for i in range(4):
            await w.start_expense(client, people["app"], f"EXP-SLOW-{i}")
        with anyio.fail_after(2):
            await dropped.wait()
        assert sub.overflowed
        # What it had not read stays bounded: two changes, then nothing more was queued.
        told = []
        with anyio.move_on_after(0.2):
            async for change in sub.changes():
                told.append(change)
        assert len(told) == 2
    finally:
        sub.close()


async def test_a_cursor_never_passes_a_line_still_being_committed(
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: container.Services,
    database_url: str,
) -> None:
    """Timeline ids are drawn in one order and committed in another: a change told while
    an older line is still being committed carries a cursor below that line, so a client
    resuming from it (here or on another process) cannot skip it (docs/live.md, "Resume")."""
    await w.start_expense(client, people["app"], "EXP-ORDER-1")
    await w.start_expense(client, people["app"], "EXP-ORDER-2")
    first = await w.slot_named(client, people["frank"], "finance_review", "EXP-ORDER-1")
    second = await w.slot_named(client, people["frank"], "finance_review", "EXP-ORDER-2")
    slow = await asyncpg.connect(database_url)
    try:
        async with lv.connect(client, people["frank"]) as frank:
            await frank.subscribe("1", lv.INBOX)
            await lv.subscribed(services, 1)
            # A slow decision: its line has an id, its transaction has not committed.
            held = slow.transaction()
            await held.start()
            await slow.execute("SELECT set_config('taskflow.workspace', '*', true)")
            pending = await slow.fetchval(
                "INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)"
                " SELECT run, slot, 'slot.noted', actor, reason, details, at FROM audit_event"
                " ORDER BY id DESC LIMIT 1 RETURNING id"
            )
            await w.claim(client, people["fiona"], first["id"])
            told = (await frank.next())["payload"]["data"]["inboxChanged"]
            assert int(told["cursor"]) < pending
            await held.commit()
            await w.claim(client, people["fiona"], second["id"])
            later = (await frank.next())["payload"]["data"]["inboxChanged"]
        assert later["slotId"] == second["id"]
        assert int(later["cursor"]) > pending
    finally:
        await slow.close()
