"""The ``calendars`` query over HTTP: every signed-in caller reads calendars and their versions."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from taskflow import clock
from taskflow.config import config
from tests.api import operation_inputs
from tests.conftest import asgi_client, gql, services_with, tokens_for
from tests.unit.calendars.helpers import SHIPPED

pytestmark = pytest.mark.anyio
QUERY = operation_inputs.text("calendars")
DESK = """name = "desk"
description = "Support desk"
timezone = "Europe/London"
[week]
mon-fri = ["09:00-17:30"]
[holidays]
country = "GB"
subdivision = "ENG"

[[versions]]
effective = 2027-03-01
description = "longer hours"
[versions.week]
mon-fri = ["08:00-18:00"]
sat = ["10:00-14:00"]
"""


@pytest.fixture
async def desk(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock, tmp_path: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str]]]:
    folder = tmp_path / "calendars"
    shutil.copytree(SHIPPED, folder)
    (folder / "desk.toml").write_text(DESK)
    ours = replace(settings, calendars=folder)
    async with (
        services_with(database_url, ours, frozen_clock) as services,
        asgi_client(services) as http,
    ):
        yield http, tokens_for(services)


async def test_every_signed_in_caller_reads_versions_and_no_one_else(
    desk: tuple[httpx.AsyncClient, dict[str, str]],
) -> None:
    http, tokens = desk
    refused = await gql(http, QUERY, {"name": "desk"})
    assert refused.status == 401
    assert refused.error_codes == ["UNAUTHENTICATED"]
    for who in ("fiona", "app", "max"):
        [found] = (await gql(http, QUERY, {"name": "desk"}, token=tokens[who])).ok()["calendars"]
        assert found["name"] == "desk"
        assert found["timezone"] == "Europe/London"
        first, later = found["versions"]
        assert first["effective"] is None
        assert first["holidays"] == "GB/ENG"
        assert first["week"][0] == {"weekday": "mon", "windows": ["09:00-17:30"]}
        assert later["effective"] == "2027-03-01T00:00:00+00:00"
        assert later["key"] == "versions[0]"
        assert later["description"] == "longer hours"
        assert later["week"][5] == {"weekday": "sat", "windows": ["10:00-14:00"]}
    everything = (await gql(http, QUERY, token=tokens["fiona"])).ok()["calendars"]
    assert {"desk", "uk-london", "24x7"} <= {c["name"] for c in everything}
    assert (await gql(http, QUERY, {"name": "nope"}, token=tokens["fiona"])).ok() == {
        "calendars": []
    }
