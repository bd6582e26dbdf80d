"""``GET /metrics`` after a scripted day: each series with the value the day left.

The day (``escalating-to-owner``: finance approves within two business hours,
a breach hands the slot to the subject's owner): five requests, claims,
a completion, a refused claim, breaches fired by the worker stepped with the
frozen clock, and an escalation that fails and is parked dead at once
(``TASKFLOW_TIMER_MAX_ATTEMPTS=1``; an owner id too long for a holder makes
PostgreSQL refuse it, as in ``test_poison_timers.py``). Counters and
histograms are process-wide, so they are read as the difference between a
scrape before the day and one after; gauges are read as they are.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport
from prometheus_client import parser

from taskflow import clock
from taskflow.api import app as api_app
from taskflow.api.graphql.common import relay
from taskflow.config import config
from taskflow.service.clocks import timers
from taskflow.service.common import container
from taskflow.service.reports import metrics
from taskflow.worker import loop
from tests.conftest import asgi_client, gql, with_settings
from tests.integration import starting

pytestmark = pytest.mark.anyio

#: Tuesday in London (UTC in winter): two business hours from 10:00 run out at 12:00.
T10 = datetime(2026, 12, 1, 10, tzinfo=UTC)
BROKEN_OWNER = "o" * 250

OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"
CLAIM = (OPERATIONS / "claim.graphql").read_text()
CLAIM_NEXT = (OPERATIONS / "claim_next.graphql").read_text()
COMPLETE = (OPERATIONS / "complete.graphql").read_text()

Series = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Series:
    found: Series = {}
    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(series: Series, name: str, **labels: str) -> float | None:
    return series.get((name, frozenset(labels.items())))


def delta(after: Series, before: Series, name: str, **labels: str) -> float:
    return (value(after, name, **labels) or 0.0) - (value(before, name, **labels) or 0.0)


@pytest.fixture
def day_services(sla_services: container.Services) -> container.Services:
    settings = dataclasses.replace(sla_services.settings, timer_max_attempts=1)
    return dataclasses.replace(sla_services, settings=settings)


@pytest.fixture
async def client(day_services: container.Services) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(day_services) as http:
        yield http


async def scrape(http: httpx.AsyncClient) -> Series:
    response = await http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return parse(response.text)


start = starting.start_owned


async def slot_of(services: container.Services, run_id: str) -> str:
    async with services.db.connection() as conn:
        found = await conn.fetchval("SELECT id FROM slot WHERE run = $1", uuid.UUID(run_id))
    return relay.to_global_id("Slot", str(found))


async def test_a_scrape_after_a_day_finds_each_series_with_its_value(
    day_services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    services = day_services
    frozen_clock.set(T10)
    before = await scrape(client)
    fiona = services.staff_tokens.mint("fiona", T10)
    frank = services.staff_tokens.mint("frank", T10)

    broken = await start(services, "R-1", BROKEN_OWNER)
    done = await start(services, "R-2", "leah")
    await start(services, "R-3", "leah")
    await start(services, "R-4", "leah")

    frozen_clock.set(T10 + timedelta(minutes=30))
    claimed = await gql(client, CLAIM, {"slotId": await slot_of(services, done)}, token=fiona)
    assert claimed.ok()["claim"]["__typename"] == "SlotSuccess"
    completed = await gql(
        client, COMPLETE, {"slotId": await slot_of(services, done), "payload": {}}, token=fiona
    )
    assert completed.ok()["complete"]["__typename"] == "CompleteSuccess"
    broken_slot = await slot_of(services, broken)
    assert (await gql(client, CLAIM, {"slotId": broken_slot}, token=frank)).ok()["claim"][
        "__typename"
    ] == "SlotSuccess"
    taken = await gql(client, CLAIM, {"slotId": broken_slot}, token=fiona)
    assert taken.ok()["claim"]["code"] == "ALREADY_CLAIMED"
    nexted = await gql(client, CLAIM_NEXT, {}, token=frank)
    assert nexted.ok()["claimNext"]["__typename"] == "SlotSuccess"
    anonymous = await gql(client, CLAIM_NEXT, {})
    assert anonymous.error_codes == ["UNAUTHENTICATED"]

    frozen_clock.set(T10 + timedelta(hours=1))
    await start(services, "R-5", "leah")  # opens at 11:00, due 13:00

    # 12:00:30: the worker's pass, 30 s late: three breaches, two
    # escalations to leah, and R-1's escalation fails once and is parked dead.
    frozen_clock.set(T10 + timedelta(hours=2, seconds=30))
    assert await timers.run_due(services, frozen_clock.now()) == 8  # with 3 at-risk firings

    # 12:40: R-5 has 20 of its 120 minutes left: at risk. The worker's snapshot step.
    frozen_clock.set(T10 + timedelta(hours=2, minutes=40))
    assert await timers.run_due(services, frozen_clock.now()) == 1  # R-5's at-risk timer
    assert await metrics.refresh(services)
    assert not await metrics.refresh(services)  # fresh: another worker's pass skips it
    after = await scrape(client)

    live = "taskflow_slots_live"
    wf = "escalating-to-owner"
    assert value(after, live, workflow=wf, state="waiting", status="claimed") == 3
    assert value(after, live, workflow=wf, state="waiting", status="open") == 1
    assert value(after, "taskflow_clocks_at_risk", workflow=wf, milestone="finished") == 1
    assert value(after, "taskflow_clocks_breached", workflow=wf, milestone="finished") == 3
    assert value(after, "taskflow_snapshot_age_seconds") == 0
    # The parked escalation needs a person; the worker's snapshot counts it by reason.
    assert value(after, "taskflow_needs_attention", reason="TIMER_DEAD") == 1
    assert value(after, "taskflow_needs_attention", reason="ROUTE_UNMATCHED") == 0
    assert value(after, "taskflow_oldest_open_slot_age_seconds") == 100 * 60
    assert value(after, "taskflow_timers", state="due") == 0
    assert value(after, "taskflow_timers", state="overdue") == 0
    assert value(after, "taskflow_timers_dead") == 1

    firings = "taskflow_timer_firings_total"
    assert delta(after, before, firings, kind="breach", outcome="fired") == 3
    assert delta(after, before, firings, kind="at_risk", outcome="fired") == 4
    assert delta(after, before, firings, kind="reminder", outcome="fired") == 2
    assert delta(after, before, firings, kind="reminder", outcome="dead") == 1
    lag = "taskflow_timer_firing_lag_seconds"
    assert delta(after, before, f"{lag}_count", kind="breach") == 3
    assert delta(after, before, f"{lag}_sum", kind="breach") == 90
    assert delta(after, before, f"{lag}_bucket", kind="breach", le="30.0") == 3
    assert delta(after, before, f"{lag}_bucket", kind="breach", le="10.0") == 0

    assert delta(after, before, "taskflow_claims_total", how="claim") == 2
    assert delta(after, before, "taskflow_claims_total", how="claim_next") == 1
    assert delta(after, before, "taskflow_completions_total", via="staff") == 1
    assert delta(after, before, "taskflow_refusals_total", code="ALREADY_CLAIMED") == 1

    latency = "taskflow_graphql_request_duration_seconds_count"
    assert delta(after, before, latency, operation="Claim", outcome="ok") == 2
    assert delta(after, before, latency, operation="Claim", outcome="refused") == 1
    assert delta(after, before, latency, operation="Complete", outcome="ok") == 1
    assert delta(after, before, latency, operation="ClaimNext", outcome="ok") == 1
    assert delta(after, before, latency, operation="ClaimNext", outcome="unauthenticated") == 1

    in_use = value(after, "taskflow_db_pool_connections", pool="main", state="in_use")
    idle = value(after, "taskflow_db_pool_connections", pool="main", state="idle")
    assert in_use is not None
    assert idle is not None
    assert in_use + idle >= 1

    # 13:02, the worker stopped: R-5's breach and escalation are due, and late.
    frozen_clock.set(T10 + timedelta(hours=3, minutes=2))
    later = await scrape(client)
    assert value(later, "taskflow_timers", state="due") == 2
    assert value(later, "taskflow_timers", state="overdue") == 2
    assert value(later, "taskflow_snapshot_age_seconds") == 22 * 60


async def test_before_any_worker_pass_the_snapshot_age_says_never(
    client: httpx.AsyncClient,
) -> None:
    found = await scrape(client)
    assert value(found, "taskflow_snapshot_age_seconds") == -1
    assert value(found, "taskflow_timers_dead") == 0
    assert value(found, "taskflow_oldest_open_slot_age_seconds") == 0


async def test_a_query_that_does_not_parse_is_counted_an_error(
    client: httpx.AsyncClient,
) -> None:
    # The parse ran in a hook that raised past the timing: such requests were counted "ok".
    latency = "taskflow_graphql_request_duration_seconds_count"
    before = await scrape(client)
    answer = await client.post("/graphql", json={"query": "query Broken { me { id "})
    assert answer.json()["errors"][0]["message"].startswith("Syntax Error")
    after = await scrape(client)
    assert delta(after, before, latency, operation="Broken", outcome="error") == 0
    assert delta(after, before, latency, operation="anonymous", outcome="error") == 1
    assert delta(after, before, latency, operation="anonymous", outcome="ok") == 0


async def get(services: container.Services, peer: str, **headers: str) -> httpx.Response:
    transport = ASGIWebSocketTransport(api_app.create_app(services=services), client=(peer, 4000))
    async with httpx.AsyncClient(transport=transport, base_url="http://taskflow.test") as http:
        return await http.get("/metrics", headers=headers)


async def test_loopback_by_default_serves_this_machine_only(
    services: container.Services,
) -> None:
    assert services.settings.metrics == "loopback"
    assert (await get(services, "127.0.0.1")).status_code == 200
    assert (await get(services, "::1")).status_code == 200
    refused = await get(services, "203.0.113.7")
    assert refused.status_code == 403
    assert "TASKFLOW_METRICS" in refused.text
    assert "taskflow_" not in refused.text


async def test_a_token_setting_wants_the_bearer_from_anywhere(
    services: container.Services,
) -> None:
    secret = "s3cret-metrics-token-0123456789"
    guarded = with_settings(services, metrics=f"token:{secret}")
    ok = await get(guarded, "203.0.113.7", authorization=f"Bearer {secret}")
    assert ok.status_code == 200
    assert "taskflow_timers_dead" in ok.text
    for headers in ({}, {"authorization": "Bearer wrong-token-0123456789"}):
        refused = await get(guarded, "127.0.0.1", **headers)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert "taskflow_" not in refused.text


async def test_off_answers_not_found(services: container.Services) -> None:
    assert (await get(with_settings(services, metrics="off"), "127.0.0.1")).status_code == 404


@pytest.mark.parametrize(
    "setting", ["open", "token:", "token:short", "token: padded-token-0123456789 ", "LOOPBACK"]
)
def test_a_bad_setting_is_refused_at_start_with_what_to_write(setting: str) -> None:
    env = {
        "TASKFLOW_METRICS": setting,
        "TASKFLOW_SECRET_KEYS": "k" * 40,
        "TASKFLOW_DATABASE_URL": "postgresql://x/",
    }
    with pytest.raises(config.errors.ConfigError, match="TASKFLOW_METRICS must be loopback"):
        config.load(env)
    good = dict(env, TASKFLOW_METRICS="token:" + "t" * 16)
    assert config.load(good).metrics == "token:" + "t" * 16


async def snapshot_taken_at(services: container.Services) -> datetime | None:
    async with services.db.connection() as conn:
        found: datetime | None = await conn.fetchval(
            "SELECT taken_at FROM metric_snapshot WHERE name = 'live'"
        )
    return found


async def test_a_running_worker_keeps_the_snapshot_every_15_seconds_of_its_clock(
    services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    async with loop.running(services, poll=0.05) as worker:
        async with asyncio.timeout(5):
            while await snapshot_taken_at(services) is None:
                await worker.next_pass()
        assert await snapshot_taken_at(services) == frozen_clock.now()
        frozen_clock.advance(timedelta(seconds=5))
        async with asyncio.timeout(5):  # several passes: still fresh
            await worker.passes_done(worker.passes + 5)
        assert await snapshot_taken_at(services) == frozen_clock.now() - timedelta(seconds=5)
        frozen_clock.advance(timedelta(seconds=10))
        async with asyncio.timeout(5):
            while await snapshot_taken_at(services) != frozen_clock.now():
                await worker.next_pass()
        assert await snapshot_taken_at(services) == frozen_clock.now()


def test_operation_names_are_bounded_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "_operations", set())  # this process's names stay as they were
    assert metrics.operation_label(None) == "anonymous"
    assert metrics.operation_label("Inbox") == "Inbox"
    assert metrics.operation_label("x" * 65) == "other"
    assert metrics.operation_label("drop table;") == "other"
    for i in range(metrics.MAX_OPERATIONS):
        metrics.operation_label(f"Generated{i}")
    assert metrics.operation_label("OneTooMany") == "other"
    assert metrics.operation_label("Inbox") == "Inbox"  # names seen before keep theirs
