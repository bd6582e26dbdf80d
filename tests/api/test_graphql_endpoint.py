"""The endpoint's guard rails: limits, masking, GraphiQL, health."""

from __future__ import annotations

import asyncpg
import httpx
import pytest

from taskflow.api import app as api_app
from taskflow.api.graphql import schema
from taskflow.service.common import container
from tests.conftest import gql

pytestmark = pytest.mark.anyio


async def test_health_reports_a_reachable_database(client: httpx.AsyncClient) -> None:
    response = await client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "reachable"}


async def test_health_reports_an_unreachable_database(
    client: httpx.AsyncClient, services: container.Services
) -> None:
    await services.db.pool.close()
    response = await client.get("/health")
    assert response.status_code == 503
    assert response.json()["database"] == "unreachable"


async def test_too_deep_a_query_is_refused(
    services: container.Services, people: dict[str, str]
) -> None:
    # The shipped limit (MAX_DEPTH) needs nesting later types bring; a lowered limit
    # proves the limiter is wired into the endpoint.
    application = api_app.create_app(services=services, max_depth=2)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(application), base_url="http://t"
    ) as http:
        deep = "{ principals(first: 5) { edges { node { login } } } }"
        result = await gql(http, deep, token=people["ada"])
        assert result.data is None
        assert "exceeds maximum operation depth of 2" in result.errors[0]["message"]
        shallow = await gql(http, "{ principals(first: 5) { totalCount } }", token=people["ada"])
        assert shallow.ok()["principals"]["totalCount"] == len(people)


async def test_too_many_aliases_are_refused(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    aliases = " ".join(f"m{i}: me {{ id }}" for i in range(schema.MAX_ALIASES + 1))
    result = await gql(client, "{ " + aliases + " }", token=people["ada"])
    assert result.data is None
    assert "aliases" in result.errors[0]["message"]


async def test_unexpected_errors_are_masked_with_a_request_id(
    client: httpx.AsyncClient,
    services: container.Services,
    people: dict[str, str],
    database_url: str,
) -> None:
    conn = await asyncpg.connect(database_url)
    await conn.execute("ALTER TABLE principal RENAME COLUMN display_name TO broken")
    await conn.close()
    result = await gql(client, "{ me { id } }", token=people["ada"])
    error = result.errors[0]
    assert error["extensions"]["code"] == "INTERNAL"
    assert error["message"].startswith("Unexpected error. It has been logged with request id ")
    assert "broken" not in str(result.body)
    assert "Traceback" not in str(result.body)


async def test_graphiql_is_served_in_dev(client: httpx.AsyncClient) -> None:
    response = await client.get("/graphql", headers={"accept": "text/html"})
    assert response.status_code == 200
    assert "graphiql" in response.text.lower()


async def test_graphiql_page_and_assets_come_from_the_server(client: httpx.AsyncClient) -> None:
    page = await client.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert '<script src="/graphiql/graphiql.min.js">' in page.text
    assert "unpkg.com" not in page.text
    for name in ("graphiql.min.js", "graphiql.min.css", "react.production.min.js"):
        asset = await client.get(f"/graphiql/{name}")
        assert asset.status_code == 200, name
    licence = await client.get("/graphiql/LICENSE.graphiql.txt")
    assert "MIT" in licence.text
