"""``/graphql``'s socket speaks ``graphql-transport-ws`` for subscriptions and nothing else:
another subprotocol (or none) is refused before any operation runs, and a query or mutation
sent over the socket is answered with an error, not run (docs/security.md, docs/live.md)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from httpx_ws import HTTPXWSException, aconnect_ws

from tests.conftest import gql

pytestmark = pytest.mark.anyio

SIGN_OUT = "mutation { signOutEverywhere(input: {}) { __typename } }"
#: The messages that run one operation on graphql-ws (strawberry's older protocol).
OPENING: list[dict[str, Any]] = [
    {"type": "connection_init", "payload": {}},
    {"id": "1", "type": "start", "payload": {"query": SIGN_OUT}},
]


async def _try_operation(client: httpx.AsyncClient, protocols: list[str], token: str) -> list[Any]:
    """Open a socket and send the mutation; what came back (raises if refused)."""
    received: list[Any] = []
    async with aconnect_ws(
        "/graphql", client, subprotocols=protocols, headers={"Authorization": f"Bearer {token}"}
    ) as ws:
        for message in OPENING:
            await ws.send_text(json.dumps(message))
        with anyio.move_on_after(2):
            while True:
                received.append(await ws.receive_json())
    return received


@pytest.mark.parametrize("protocols", [["graphql-ws"], []])
async def test_a_websocket_of_another_protocol_is_refused_and_runs_nothing(
    client: httpx.AsyncClient, people: dict[str, str], protocols: list[str]
) -> None:
    with pytest.raises(HTTPXWSException) as refused:
        await _try_operation(client, protocols, people["max"])
    assert "graphql-transport-ws only" in str(refused.value)
    # The mutation never ran: max's token still works.
    me = await gql(client, "{ me { login: id } }", token=people["max"])
    assert me.error_codes == []
    assert me.ok()["me"]["login"]


async def test_graphql_over_http_is_unchanged(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    page = await client.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200
    # GraphiQL runs queries over HTTP and is not told of a socket to open.
    assert "subscriptionUrl" not in page.text
    assert "ws:" not in page.text
    me = await gql(client, "{ me { login: id } }", token=people["max"])
    assert me.error_codes == []
    assert me.ok()["me"]["login"]


async def test_a_subscription_posted_over_http_is_refused_with_where_to_send_it(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    response = await client.post(
        "/graphql",
        json={"query": "subscription { inboxChanged { cursor } }"},
        headers={"Authorization": f"Bearer {people['fiona']}"},
    )
    error = response.json()["errors"][0]
    assert error["extensions"]["code"] == "INVALID_INPUT"
    assert "WebSocket to /graphql (subprotocol graphql-transport-ws" in error["message"]
