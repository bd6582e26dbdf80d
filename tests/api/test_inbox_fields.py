"""An inbox page's plain fields (an attribute read as is: a slot's name, status, dates, its
subject's type) are answered without graphql-core's per-field work, and the answer is the
one graphql-core's own executor gives, byte for byte."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from taskflow.api import app as api_app
from taskflow.api.graphql.common import plain_fields
from taskflow.service.common import container
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

#: bench/inbox.py's operation.
INBOX = """query Inbox($first: Int) { inbox(first: $first) {
  pageInfo { hasNextPage endCursor }
  edges { node { id name label status holder priority dueAt version workflow state runState
                 event subject { type externalId attributes } } } } }"""

#: Every field of a slot a frontend's list may show, plain or not.
WIDE = """query { inbox(first: 20) { totalCount edges { cursor node {
  __typename id name label workflow state runState status event holder priority dueAt version
  item itemIndex payload candidates openedAt claimedAt satisfiedAt satisfiedBy
  subject { type externalId attributes } fields { name type required choices label }
  run { id state status workflow } } } } }"""


async def _started(client: httpx.AsyncClient, people: dict[str, str], count: int) -> None:
    for i in range(count):
        reference = f"EXP-{i:03d}"
        attributes = {**w.EXPENSE, "reference": reference, "amount": 100.0 + i}
        await w.start(client, people["app"], "expense-approval", "expense", reference, attributes)


@pytest.fixture
def stock_app(services: container.Services, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The app with strawberry's own executor (graphql-core resolving every field)."""
    with monkeypatch.context() as patched:
        patched.setattr(
            plain_fields, "executor_for", lambda schema: StrawberryGraphQLCoreExecutionContext
        )
        return api_app.create_app(services=services)


@pytest.fixture
async def stock(stock_app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=ASGIWebSocketTransport(stock_app), base_url="http://taskflow.test"
    ) as http:
        yield http


async def test_the_inbox_answers_as_graphql_core_alone_does(
    client: httpx.AsyncClient, stock: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await _started(client, people, 6)
    claimed = (await w.inbox(client, people["fiona"]))[0]["id"]
    await gql(
        client,
        "mutation($id: ID!) { claim(input: {slotId: $id}) { __typename } }",
        {"id": claimed},
        token=people["fiona"],
    )
    for query, variables in ((INBOX, {"first": 50}), (INBOX, {"first": 2}), (WIDE, None)):
        ours = await client.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {people['fiona']}"},
        )
        theirs = await stock.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {people['fiona']}"},
        )
        assert ours.status_code == theirs.status_code == 200
        assert ours.content == theirs.content
        assert "errors" not in ours.json()
    page = (await gql(client, WIDE, token=people["fiona"])).ok()["inbox"]["edges"]
    assert {edge["node"]["status"] for edge in page} == {"OPEN", "CLAIMED"}
    assert any(edge["node"]["holder"] == "fiona" for edge in page)


async def test_an_inbox_page_resolves_few_fields_through_graphql_core(
    client: httpx.AsyncClient, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench's page of 50 slots asked graphql-core for a resolve info 855 times, 17 a
    slot (every field); now only for the inbox itself: its edges and page info, the
    slots, their subjects and their fields are plain attributes."""
    await _started(client, people, 50)
    await gql(client, INBOX, {"first": 50}, token=people["fiona"])  # caches warm
    built: list[str] = []
    original: Callable[..., Any] = StrawberryGraphQLCoreExecutionContext.build_resolve_info

    def counted(self: Any, field_def: Any, field_nodes: Any, *rest: Any) -> Any:
        built.append(field_nodes[0].name.value)
        return original(self, field_def, field_nodes, *rest)

    monkeypatch.setattr(StrawberryGraphQLCoreExecutionContext, "build_resolve_info", counted)
    page = (await gql(client, INBOX, {"first": 50}, token=people["fiona"])).ok()["inbox"]
    assert len(page["edges"]) == 50
    assert page["edges"][0]["node"]["subject"]["type"] == "expense"
    assert built == ["inbox"]
