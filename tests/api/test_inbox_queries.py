"""An inbox page costs a fixed number of queries, whatever its size (no N+1)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow.api import app as api_app
from taskflow.service import container
from taskflow.store import db
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

PAGE = """query { inbox(first: 50) { pageInfo { hasNextPage } edges { node {
  id label priority status subject { externalId attributes } runState
  fields { name type } run { id state workflow } } } } }"""


class Counter:
    def __init__(self) -> None:
        self.statements: list[str] = []

    def __call__(self, record: object) -> None:
        query = str(getattr(record, "query", record))
        # asyncpg resets a connection when it returns to the pool; not a query of ours.
        if not query.startswith("SELECT pg_advisory_unlock_all()"):
            self.statements.append(query)


@pytest.fixture
async def counted(services: container.Services) -> AsyncIterator[tuple[httpx.AsyncClient, Counter]]:
    counter = Counter()
    database = await db.Database.connect(services.db.url, query_logger=counter)
    counted_services = replace(services, db=database)
    application = api_app.create_app(services=counted_services)
    async with httpx.AsyncClient(
        transport=ASGIWebSocketTransport(application), base_url="http://taskflow.test"
    ) as http:
        yield http, counter
    await database.close()


async def test_an_inbox_page_of_fifty_costs_the_same_queries_as_a_page_of_one(
    client: httpx.AsyncClient, people: dict[str, str], counted: tuple[httpx.AsyncClient, Counter]
) -> None:
    http, counter = counted
    for i in range(60):
        reference = f"EXP-{i:03d}"
        await w.start(
            client,
            people["app"],
            "expense-approval",
            "expense",
            reference,
            {**w.EXPENSE, "reference": reference},
        )

    await gql(http, PAGE, token=people["fiona"])  # warm the pool: connections, type codecs
    counter.statements.clear()
    one = await gql(http, PAGE.replace("first: 50", "first: 1"), token=people["fiona"])
    assert len(one.ok()["inbox"]["edges"]) == 1
    for_one = len(counter.statements)

    counter.statements.clear()
    page = (await gql(http, PAGE, token=people["fiona"])).ok()["inbox"]
    assert len(page["edges"]) == 50
    assert page["pageInfo"]["hasNextPage"] is True
    assert all(edge["node"]["run"]["state"] == "submitted" for edge in page["edges"])
    # Authenticate, the page itself, one batched load of the runs behind it.
    assert len(counter.statements) == for_one
    assert len(counter.statements) <= 3, counter.statements
