"""Magic links under attack and accident: replays, races, tampering, expiry, prefetching,
staff getting there first, key rotation, the abuse throttle, and logs."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import asyncpg
import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow import clock
from taskflow.api import app as api_app
from taskflow.core.links import links as core
from taskflow.service.access import tokens
from taskflow.service.common import container
from taskflow.service.links import link_use, links
from tests.api import magic as m
from tests.api import workflows as w
from tests.conftest import TEST_SECRET, gql

pytestmark = pytest.mark.anyio

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


@pytest.fixture
def no_throttle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests that send many refused requests on purpose are not about the throttle."""
    monkeypatch.setattr(link_use, "LIMITS", core.Limits(free=10**6, block_after=10**6))


async def _kinds(
    client: httpx.AsyncClient, people: dict[str, str], run_id: str, only: list[str] | None = None
) -> list[str]:
    return [line["kind"] for line in await w.timeline(client, people["olga"], run_id, only)]


@pytest.mark.usefixtures("no_throttle")
async def test_a_used_link_replayed_100_times_has_one_effect(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    link, slot_id, run_id = await m.vendor_link(client, people)
    page = m.page_token((await client.get(m.path_of(link["url"]))).text)
    first = await m.submit(client, link["url"], {}, page=page, files=m.pdf("ref-1.pdf"))
    assert first.status_code == 200
    replies = [
        await m.submit(client, link["url"], {}, page=page, files=m.pdf(f"ref-{i}.pdf"))
        for i in range(2, 102)
    ]
    assert {r.status_code for r in replies} == {410}
    assert len({r.text for r in replies}) == 1
    slot = await m.slot_links(client, people["olga"], slot_id)
    assert [ref["name"] for ref in slot["payload"]["document"]] == ["ref-1.pdf"]
    kinds = await _kinds(client, people, run_id, ["slot.satisfied", "link.used"])
    assert kinds == ["slot.satisfied", "link.used"]
    assert len(await _kinds(client, people, run_id, ["link.refused"])) == 100


@pytest.mark.usefixtures("no_throttle")
# No throttle: the 19 losers' refusals would otherwise slow whichever of the 20 checks in
# after the fifth one, and this test is about exactly one success, not about abuse limits.
@pytest.mark.usefixtures("no_throttle")
async def test_twenty_concurrent_submissions_give_exactly_one_success(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    link, slot_id, run_id = await m.vendor_link(client, people)
    page = m.page_token((await client.get(m.path_of(link["url"]))).text)
    # Each request takes its own pooled connection: the race is between real transactions.
    replies = await asyncio.gather(
        *(
            m.submit(client, link["url"], {}, page=page, files=m.pdf(f"ref-{i}.pdf"))
            for i in range(20)
        )
    )
    statuses = sorted(r.status_code for r in replies)
    assert statuses == [200] + [410] * 19
    winner = next(i for i, r in enumerate(replies) if r.status_code == 200)
    slot = await m.slot_links(client, people["olga"], slot_id)
    assert [ref["name"] for ref in slot["payload"]["document"]] == [f"ref-{winner}.pdf"]
    assert slot["links"][0]["status"] == "USED"
    kinds = await _kinds(client, people, run_id)
    assert (kinds.count("slot.satisfied"), kinds.count("link.used")) == (1, 1)
    refused = await w.timeline(client, people["olga"], run_id, kinds=["link.refused"])
    assert {line["reason"] for line in refused} == {"used"}
    assert len(refused) == 19


def _flip(token: str, rng: random.Random) -> str:
    """Flip one bit of one base64 character (never a segment's last, whose spare bits
    decode to the same bytes and would leave the token intact)."""
    ends = {i - 1 for i, c in enumerate(token) if c == "."} | {len(token) - 1}
    position = rng.choice([i for i, c in enumerate(token) if c != "." and i not in ends])
    value = B64.index(token[position]) ^ (1 << rng.randrange(6))
    return token[:position] + B64[value] + token[position + 1 :]


@pytest.mark.usefixtures("no_throttle")
async def test_a_thousand_tampered_tokens_are_all_refused_alike(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    link, slot_id, _ = await m.vendor_link(client, people)
    other = await _other_link(client, people)
    token = link["token"]
    claims = links.decode(services, token)
    other_claims = links.decode(services, other["token"])
    assert claims is not None
    assert other_claims is not None
    link_id, nonce = claims
    keys = services.settings.secret_keys
    rng = random.Random(7)

    def signed(payload: Any, salt: str = links.LINK_SALT, key_list: Any = keys) -> str:
        return str(tokens.serializer(key_list, salt).dumps(payload))

    tampered: list[str] = [_flip(token, rng) for _ in range(700)]
    tampered += [token[:cut] for cut in range(1, len(token), 2)][:100]
    tampered += [
        signed([link_id, nonce], salt=tokens.STAFF_SALT),  # wrong salt
        signed([link_id, nonce], salt=link_use.PAGE_SALT),
        signed([link_id, nonce], key_list=["a-retired-key-" + "x" * 30]),  # retired key
        signed([other_claims[0], nonce]),  # another slot's link with this nonce
        signed([link_id, other_claims[1]]),  # this link with another's nonce
        signed([str(uuid.uuid4()), nonce]),  # unknown link
        signed([link_id]),
        signed({"sub": "olga", "exp": 2**40}),
        people["olga"],  # a staff token
        token + "x",
        "x" + token,
        token.replace(".", "", 1),
    ]
    while len(tampered) < 1000:
        tampered.append("".join(rng.choice(B64 + ".") for _ in range(rng.randrange(1, 200))))
    assert token not in tampered
    assert len(tampered) == 1000

    reference = await client.get("/l/unknown")
    assert reference.status_code == 410
    for bad in tampered:
        answer = await client.get(f"/l/{bad}")
        assert (answer.status_code, answer.text) == (410, reference.text), bad
    for bad in tampered[::50]:
        posted = await client.post(f"/l/{bad}", data={"_page": "p", "document": "x"})
        assert (posted.status_code, posted.text) == (410, reference.text), bad
        result = await gql(
            client,
            m.COMPLETE_WITH_LINK,
            {"input": {"token": bad, "payload": {"document": "x"}}},
        )
        assert result.ok()["completeWithLink"]["code"] == "LINK_UNUSABLE"

    # The real link was never touched.
    assert (await client.get(m.path_of(link["url"]))).status_code == 200
    slot = await m.slot_links(client, people["olga"], slot_id)
    assert (slot["status"], slot["links"][0]["status"]) == ("OPEN", "ACTIVE")


async def _other_link(client: httpx.AsyncClient, people: dict[str, str]) -> dict[str, Any]:
    run = (
        await w.start(
            client,
            people["app"],
            "vendor-onboarding",
            "vendor",
            "V-777",
            {**m.VENDOR, "vendor_number": "V-777", "required_documents": ["insurance"]},
        )
    )["run"]
    slot_id = (await m.upload_slots(client, people, run["id"]))["insurance"]
    return await m.minted(client, people, slot_id)


@pytest.mark.usefixtures("no_throttle")
async def test_expiry_one_second_either_side(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    run = await m.start_vendor(client, people)
    uploads = await m.upload_slots(client, people, run["id"])
    early = await m.minted(client, people, uploads["bank details"], expires_in=3600)
    late = await m.minted(client, people, uploads["certificate of incorporation"], expires_in=3600)
    late_page = m.page_token((await client.get(m.path_of(late["url"]))).text)

    frozen_clock.advance(timedelta(seconds=3599))
    assert (await client.get(m.path_of(early["url"]))).status_code == 200
    assert (await m.submit(client, early["url"], {}, files=m.pdf())).status_code == 200

    frozen_clock.advance(timedelta(seconds=1))  # exactly at expiry: no longer
    assert (await client.get(m.path_of(late["url"]))).status_code == 410
    frozen_clock.advance(timedelta(seconds=1))
    assert (await client.get(m.path_of(late["url"]))).status_code == 410
    posted = await m.submit(client, late["url"], {"document": "too late"}, page=late_page)
    assert posted.status_code == 410
    refused = await w.timeline(client, people["olga"], run["id"], kinds=["link.refused"])
    assert [line["reason"] for line in refused] == ["expired"]


async def _write_marks(url: str) -> list[tuple[Any, ...]]:
    """Per table of this database: its row count and newest row version, so any insert,
    update or delete shows (the server-wide next transaction id would also move for
    other databases on the server, or an autovacuum's analyze)."""
    conn = await asyncpg.connect(url)
    try:
        tables = await conn.fetch(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name"
        )
        marks = []
        for row in tables:
            name = row["table_name"]
            count, newest = await conn.fetchrow(
                f'SELECT count(*), max(xmin::text::bigint) FROM "{name}"'
            )
            marks.append((name, count, newest))
        return marks
    finally:
        await conn.close()


async def test_get_and_head_fifty_times_write_nothing(
    client: httpx.AsyncClient, people: dict[str, str], database_url: str
) -> None:
    link, slot_id, run_id = await m.vendor_link(client, people)
    path = m.path_of(link["url"])
    before = await _write_marks(database_url)
    for _ in range(50):
        shown = await client.get(path)
        assert shown.status_code == 200
        headed = await client.head(path)
        assert (headed.status_code, headed.content) == (200, b"")
        assert headed.headers["cache-control"] == "no-store"
    after = await _write_marks(database_url)
    assert after == before
    assert dict((name, count) for name, count, _ in before)["magic_link"] == 1
    slot = await m.slot_links(client, people["olga"], slot_id)
    assert (slot["status"], slot["links"][0]["opens"]) == ("OPEN", 0)
    assert not [
        k
        for k in await _kinds(client, people, run_id)
        if k != "link.minted" and k.startswith("link.")
    ]


async def test_a_slot_completed_by_staff_meanwhile_refuses_the_link(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    link, slot_id, run_id = await m.vendor_link(client, people)
    page = m.page_token((await client.get(m.path_of(link["url"]))).text)
    assert (await w.claim(client, people["olga"], slot_id))["__typename"] == "SlotSuccess"
    by_post = await m.uploaded(client, slot_id, token=people["olga"], name="scanned.pdf")
    done = await w.complete(client, people["olga"], slot_id, {"document": by_post})
    assert done["__typename"] == "CompleteSuccess"

    posted = await m.submit(client, link["url"], {"document": "mine"}, page=page)
    assert posted.status_code == 410
    assert "can no longer be used" in posted.text
    assert (await client.get(m.path_of(link["url"]))).status_code == 410
    slot = await m.slot_links(client, people["olga"], slot_id)
    assert (slot["payload"], slot["satisfiedBy"]) == ({"document": by_post}, "olga")
    assert slot["links"][0]["status"] == "ACTIVE"  # never spent: the slot went first
    refused = await w.timeline(client, people["olga"], run_id, kinds=["link.refused"])
    assert [line["reason"] for line in refused] == ["slot no longer open"]


async def test_key_rotation_keeps_links_until_their_key_is_retired(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    old, _, run_id = await m.vendor_link(client, people)
    services.settings = dataclasses.replace(
        services.settings, secret_keys=("the-new-key-" + "n" * 30, TEST_SECRET)
    )
    assert (await client.get(m.path_of(old["url"]))).status_code == 200
    uploads = await m.upload_slots(client, people, run_id)
    new = await m.minted(client, people, uploads["certificate of incorporation"])
    # The newest key signs.
    newest = tokens.serializer(["the-new-key-" + "n" * 30], links.LINK_SALT)
    assert newest.loads(new["token"])
    with pytest.raises(Exception, match="Signature"):
        tokens.serializer([TEST_SECRET], links.LINK_SALT).loads(new["token"])

    services.settings = dataclasses.replace(
        services.settings, secret_keys=("the-new-key-" + "n" * 30,)
    )
    assert (await client.get(m.path_of(old["url"]))).status_code == 410
    assert (await client.get(m.path_of(new["url"]))).status_code == 200


@pytest.fixture
async def other_client(services: container.Services) -> AsyncIterator[httpx.AsyncClient]:
    """Another client, from another address."""
    application = api_app.create_app(services=services)
    transport = ASGIWebSocketTransport(application, client=("198.51.100.7", 4242))
    async with httpx.AsyncClient(transport=transport, base_url="http://taskflow.test") as http:
        yield http


async def test_bad_tokens_from_one_client_are_slowed_then_refused(
    client: httpx.AsyncClient,
    other_client: httpx.AsyncClient,
    people: dict[str, str],
    frozen_clock: clock.FrozenClock,
) -> None:
    link, _, _ = await m.vendor_link(client, people)
    limits = link_use.LIMITS
    for _ in range(limits.free + 1):
        assert (await client.get("/l/guess")).status_code == 410
    slowed = await client.get("/l/guess")
    assert slowed.status_code == 429
    assert slowed.headers["retry-after"] == "1"
    assert slowed.headers["cache-control"] == "no-store"
    assert "Wait 1 seconds" in slowed.text
    # The wait holds for good links too, and over GraphQL; another client is unaffected.
    assert (await client.get(m.path_of(link["url"]))).status_code == 429
    throttled = await gql(
        client, m.COMPLETE_WITH_LINK, {"input": {"token": "guess", "payload": {}}}
    )
    assert throttled.ok()["completeWithLink"]["retryAfterSeconds"] == 1
    assert (await other_client.get(m.path_of(link["url"]))).status_code == 200

    waits = []
    for _ in range(limits.free + 1, limits.block_after - 1):
        frozen_clock.advance(timedelta(seconds=int(slowed.headers["retry-after"])))
        assert (await client.get("/l/guess")).status_code == 410
        slowed = await client.get("/l/guess")
        assert slowed.status_code == 429
        waits.append(int(slowed.headers["retry-after"]))
    assert waits == sorted(waits)
    assert waits[0] == 2
    assert max(waits) == 60

    frozen_clock.advance(timedelta(seconds=waits[-1]))
    assert (await client.get("/l/guess")).status_code == 410  # the last one counted
    refused = await client.get(m.path_of(link["url"]))
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) > 60  # refused until the window ends
    frozen_clock.advance(limits.window)
    assert (await client.get(m.path_of(link["url"]))).status_code == 200


async def test_tokens_never_reach_the_logs(
    client: httpx.AsyncClient, people: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    link, _, _ = await m.vendor_link(client, people)
    token = link["token"]
    await client.get(f"/l/{token}")
    await client.head(f"/l/{token}")
    await m.submit(client, link["url"], {"document": ""})
    await m.submit(client, link["url"], {}, files=m.pdf())
    await client.get(f"/l/{token}")
    await client.get(f"/l/{token}x")
    await gql(client, m.COMPLETE_WITH_LINK, {"input": {"token": token, "payload": {}}})
    # Everything the server side logged (httpx's own lines are this test's client talking).
    logged = "\n".join(
        f"{r.getMessage()} {r.args}" for r in caplog.records if not r.name.startswith("httpx")
    )
    assert caplog.records
    assert token not in logged
    assert token[:40] not in logged


async def test_an_unexpected_failure_logs_a_reference_not_the_token(
    client: httpx.AsyncClient,
    people: dict[str, str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    link, _, _ = await m.vendor_link(client, people)

    async def broken(*args: Any) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(link_use, "open_page", broken)
    caplog.set_level(logging.DEBUG)
    answer = await client.get(m.path_of(link["url"]))
    assert answer.status_code == 500
    assert answer.headers["cache-control"] == "no-store"
    [record] = [r for r in caplog.records if r.name == "taskflow.api.links"]
    reference = record.getMessage().rsplit(" ", 1)[1].rstrip(")")
    assert reference in answer.text
    assert link["token"] not in record.getMessage()
    assert record.exc_info is not None
