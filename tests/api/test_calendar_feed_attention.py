"""A holiday feed that keeps failing shows in needsAttention (``CALENDAR_FEED_FAILING``, admins
only) and clears at the next good answer, whose new copy the calendars serve at once, without
a restart (docs/calendars.md, "ICS feeds over HTTPS"). The feed is a real HTTPS server under
a CA made here (tests/integration/test_ics_feeds.py's); the worker's ask is called as its
pass calls it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.service.clocks import feed_outcomes, ics_feeds
from taskflow.service.common import container
from tests.api import attention
from tests.api.attention import OPERATIONS, START, token
from tests.conftest import gql
from tests.integration.test_calendar_reload import on_calendars, stocktakes
from tests.integration.test_ics_feeds import FEED, Feed, feed  # noqa: F401 (the fixture)

pytestmark = pytest.mark.anyio

services = attention.services

LIST = (OPERATIONS / "needs_attention.graphql").read_text()
DESK = """name = "desk"
timezone = "UTC"
[week]
mon-fri = ["09:00-17:00"]
[[ics]]
file = "holidays.ics"
"""
#: The feed's next copy: the stocktake moves from 5 to 7 January.
MOVED = FEED.replace("20270105", "20270107")


async def listed(client: httpx.AsyncClient, services: container.Services, who: str) -> list[Any]:
    found = await gql(client, LIST, {"first": 50}, token=token(services, who))
    return [edge["node"] for edge in found.ok()["needsAttention"]["edges"]]


@pytest.fixture
async def on_folder(
    services: container.Services,
    feed: Feed,  # noqa: F811
    tmp_path: Path,
    frozen_clock: clock.FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
) -> container.Services:
    """The services on a calendars folder of their own: ``desk`` reads ``holidays.ics``,
    fetched once from the feed."""
    frozen_clock.set(START)
    folder = tmp_path / "calendars"
    folder.mkdir()
    (folder / "desk.toml").write_text(DESK)
    monkeypatch.setenv("TASKFLOW_CALENDAR_FEED_CA", feed.ca_file)
    settings = ics_feeds.FeedSettings.from_env()
    net = ics_feeds.Net.of(services)
    await ics_feeds.fetch(net, feed.url, folder / "holidays.ics", settings, START)
    return on_calendars(services, folder)


def stocktake(services: container.Services) -> list[dt.date]:
    return stocktakes(services, (dt.date(2027, 1, 5), dt.date(2027, 1, 7)))


async def test_a_failing_feed_shows_until_it_answers_and_its_new_copy_is_served(
    on_folder: container.Services,
    services: container.Services,
    feed: Feed,  # noqa: F811
    client: httpx.AsyncClient,
    frozen_clock: clock.FrozenClock,
) -> None:
    assert await feed_outcomes.ask_every_feed(on_folder, frozen_clock.now()) == (1, 0)
    assert await listed(client, services, "ada") == []

    feed.status, feed.etag = 500, '"v2"'
    assert await feed_outcomes.ask_every_feed(on_folder, frozen_clock.now()) == (0, 1)
    failing_since = frozen_clock.now()
    frozen_clock.advance(dt.timedelta(hours=6))
    assert await feed_outcomes.ask_every_feed(on_folder, frozen_clock.now()) == (0, 1)
    items = await listed(client, services, "ada")
    assert [(i["reason"], i["runId"], i["workflow"]) for i in items] == [
        ("CALENDAR_FEED_FAILING", None, None)
    ]
    item = items[0]
    assert item["since"] == failing_since.isoformat()  # its first failure in a row
    assert "holidays.ics (read by desk)" in item["detail"]
    assert "HTTP 500" in item["detail"]
    assert f"localhost:{feed.url.split(':')[2].split('/')[0]}/holidays.ics" in item["detail"]
    assert "fetch-ics" in item["remedy"]
    # Deployment matters are for admins: a lead sees none.
    assert await listed(client, services, "leah") == []
    assert stocktake(on_folder) == [dt.date(2027, 1, 5)]  # the last good copy

    feed.status, feed.etag, feed.body = 200, '"v3"', MOVED.encode()
    assert await feed_outcomes.ask_every_feed(on_folder, frozen_clock.now()) == (1, 0)
    assert await listed(client, services, "ada") == []
    assert stocktake(on_folder) == [dt.date(2027, 1, 7)]  # served without a restart


async def test_a_feed_url_s_secrets_never_reach_the_item(
    on_folder: container.Services,
    services: container.Services,
    feed: Feed,  # noqa: F811
    client: httpx.AsyncClient,
    frozen_clock: clock.FrozenClock,
) -> None:
    folder = Path(on_folder.settings.calendars)
    secret = feed.url.replace("https://", "https://user:pw@") + "?token=s3cret"
    meta = folder / "holidays.ics.feed.json"
    meta.write_text(meta.read_text().replace(feed.url, secret))
    feed.status, feed.etag = 503, '"v2"'
    await feed_outcomes.ask_every_feed(on_folder, frozen_clock.now())
    (item,) = await listed(client, services, "ada")
    assert "s3cret" not in item["detail"]
    assert "pw@" not in item["detail"]
