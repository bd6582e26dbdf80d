"""A database outage is answered as such (issue 16.3), and the pool recovers by itself.

A PostgreSQL of its own (the session's is shared by every test) is stopped and
started again while the app keeps running.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from taskflow import clock
from taskflow.api import app as api_app
from taskflow.config import config
from taskflow.service.common import container
from taskflow.store.common import db, migrate
from tests.api import magic as m
from tests.api import workflows as w
from tests.conftest import EXAMPLE_PRINCIPALS, T0, gql

pytestmark = pytest.mark.anyio


class Server:
    """A dedicated embedded PostgreSQL that can be stopped and started again."""

    def __init__(self) -> None:
        self.data_dir = Path(tempfile.mkdtemp(prefix="taskflow-outage-", dir="/tmp"))
        # Imported here, not at collection: importing it installs a warnings filter that
        # pytest would drop after collecting, before the session's server starts.
        from taskflow.store.common import embedded

        with warnings.catch_warnings():
            # pgserver's import asks platformdirs for a runtime dir (unset in CI).
            warnings.simplefilter("ignore")
            self.handle = embedded.EmbeddedPostgres(self.data_dir)
        self.url = self.handle.url()
        self.socket_dir = self.url.split("host=", 1)[1].split("&", 1)[0]

    def _pg_ctl(self, *args: str) -> None:
        from pgserver import _commands

        server = self.handle._server
        _commands.pg_ctl(list(args), pgdata=self.handle.pgdata, user=server.system_user)

    def stop(self) -> None:
        self._pg_ctl("-w", "-m", "fast", "stop")

    def start(self) -> None:
        log = str(self.handle.pgdata / "restart.log")
        self._pg_ctl("-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", log, "start")


@pytest.fixture
def server() -> Iterator[Server]:
    own = Server()
    asyncio.run(migrate.migrate(own.url))
    try:
        yield own
    finally:
        own.handle.stop()


@pytest.fixture
async def outage_services(
    server: Server, settings: config.Settings
) -> AsyncIterator[container.Services]:
    database = await db.Database.connect(server.url, min_size=2, max_size=4)
    try:
        yield container.build(database, settings, clock.FrozenClock(T0))
    finally:
        await database.close()


async def test_an_outage_is_unavailable_and_the_pool_recovers(
    server: Server, outage_services: container.Services
) -> None:
    from taskflow.service.access import principals

    records = json.loads(EXAMPLE_PRINCIPALS.read_text())
    await principals.load(outage_services, records)
    now = outage_services.clock.now()
    people = {r["id"]: outage_services.staff_tokens.mint(r["id"], now) for r in records}
    application = api_app.create_app(services=outage_services)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(application), base_url="http://taskflow.test"
    ) as http:
        await w.start(http, people["app"], "expense-approval", "expense", "EXP-1", w.EXPENSE)
        slot = await w.slot_named(http, people["fiona"], "finance_review")
        await w.claim(http, people["fiona"], slot["id"])
        vendor = await m.start_vendor(http, people)
        upload = (await m.upload_slots(http, people, vendor["id"]))["bank details"]
        link = await m.minted(http, people, upload)

        server.stop()
        try:
            me = await http.post(
                "/graphql",
                json={"query": "{ me { login } }"},
                headers={"Authorization": f"Bearer {people['fiona']}"},
            )
            assert me.status_code == 503
            assert me.headers["retry-after"] == "5"
            (error,) = me.json()["errors"]
            assert error["extensions"]["code"] == "UNAVAILABLE"
            assert error["extensions"]["retryAfterSeconds"] == 5
            done = await gql(
                http,
                w.COMPLETE,
                {"input": {"slotId": slot["id"], "payload": {"decision": "approve"}}},
                token=people["fiona"],
            )
            assert done.error_codes == ["UNAVAILABLE"]
            health = await http.get("/health")
            assert (health.status_code, health.json()["database"]) == (503, "unreachable")
            page = await http.get(m.path_of(link["url"]))
            assert page.status_code == 503
            assert page.headers["retry-after"] == "5"
            report = await http.get(
                "/reports/sla", headers={"Authorization": f"Bearer {people['leah']}"}
            )
            assert report.status_code == 503
        finally:
            server.start()

        # The same pool, untouched: it reconnects by itself.
        answers: list[Any] = []
        for _ in range(3):
            answers.append(await gql(http, "{ me { login } }", token=people["fiona"]))
        assert answers[-1].ok()["me"]["login"] == "fiona"
        assert all(a.status in (200, 503) for a in answers)
        assert (await http.get("/health")).status_code == 200
        # Nothing was half-written: the refused completion left the slot claimed.
        conn = await asyncpg.connect(server.url)
        try:
            status = await conn.fetchval("SELECT status FROM slot WHERE name = 'finance_review'")
            completed = await conn.fetchval(
                "SELECT count(*) FROM audit_event WHERE kind = 'slot.completed'"
            )
        finally:
            await conn.close()
        assert (status, completed) == ("claimed", 0)
        finished = await w.complete(http, people["fiona"], slot["id"], {"decision": "approve"})
        assert finished["__typename"] == "CompleteSuccess"
