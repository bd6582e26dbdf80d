"""What a production server does not serve: OpenAPI pages, and introspection outside dev."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow.api import app as api_app
from taskflow.service.common.container import Services
from tests.conftest import gql

pytestmark = pytest.mark.anyio

INTROSPECTION = "{ __schema { types { name } } }"


@pytest.fixture
async def prod_client(services: Services) -> AsyncIterator[httpx.AsyncClient]:
    settings = dataclasses.replace(services.settings, env="prod", introspection=False)
    application = api_app.create_app(
        services=dataclasses.replace(services, settings=settings), dev=False
    )
    transport = ASGIWebSocketTransport(application)
    async with httpx.AsyncClient(transport=transport, base_url="http://taskflow.test") as http:
        yield http


@pytest.mark.parametrize(
    "path", ["/schema", "/schema/swagger", "/schema/openapi.json", "/schema/redoc"]
)
async def test_no_openapi_pages(
    client: httpx.AsyncClient, prod_client: httpx.AsyncClient, path: str
) -> None:
    for http in (client, prod_client):
        assert (await http.get(path)).status_code == 404


async def test_introspection_is_refused_outside_dev(
    prod_client: httpx.AsyncClient, client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    refused = await gql(prod_client, INTROSPECTION, token=people["ada"])
    assert refused.data is None
    assert "introspection" in refused.errors[0]["message"].lower()
    assert "__schema" in refused.errors[0]["message"] or "__type" in str(refused.errors)
    typed = await gql(prod_client, "{ me { __typename login } }", token=people["ada"])
    assert typed.ok()["me"] == {"__typename": "Principal", "login": "ada"}
    # The dev server (the default) still answers it, for GraphiQL.
    assert (await gql(client, INTROSPECTION, token=people["ada"])).ok()["__schema"]["types"]
