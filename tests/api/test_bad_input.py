"""Bad input is refused at the edge with a typed answer, never a 500 or INTERNAL (issue 16.4)."""

from __future__ import annotations

import base64
import json
from typing import Any

import asyncpg
import httpx
import pytest

from taskflow.api import app as api_app
from taskflow.api import limits
from taskflow.service.common import container
from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import GraphQLResult, gql

pytestmark = pytest.mark.anyio

ME = "{ me { login } }"


async def post(http: httpx.AsyncClient, body: bytes, **headers: str) -> httpx.Response:
    return await http.post(
        "/graphql", content=body, headers={"content-type": "application/json", **headers}
    )


def assert_bad_request(response: httpx.Response) -> str:
    assert response.status_code == 400, response.text
    body = response.json()
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    return str(error["message"])


@pytest.mark.parametrize("body", [b"5", b'"x"', b"null", b"[]", b"true", b"[{}]"])
async def test_a_body_that_is_not_an_object_is_a_400(
    client: httpx.AsyncClient, body: bytes
) -> None:
    assert "not an object" in assert_bad_request(await post(client, body))


async def test_a_body_that_is_not_utf8_is_a_400(client: httpx.AsyncClient) -> None:
    body = b'{"query": "{ me { login } }", "x": "\xff\xfe"}'
    assert "UTF-8" in assert_bad_request(await post(client, body))


async def test_json_nested_a_thousand_levels_is_a_400(client: httpx.AsyncClient) -> None:
    nested = "[" * 1000 + "]" * 1000
    body = ('{"query": "{ me { login } }", "variables": {"v": ' + nested + "}}").encode()
    assert "deeper" in assert_bad_request(await post(client, body))
    way_deeper = "[" * 100_000 + "]" * 100_000
    body = ('{"query": "{ me { login } }", "variables": {"v": ' + way_deeper + "}}").encode()
    assert_bad_request(await post(client, body))


async def test_a_query_nested_a_thousand_levels_is_refused_without_a_500(world: World) -> None:
    client, people = world.client, world.people
    deep = "{ me " + "{ login " * 1000 + "}" * 1001
    response = await client.post(
        "/graphql", json={"query": deep}, headers={"Authorization": f"Bearer {people['ada']}"}
    )
    assert response.status_code < 500
    assert response.json()["errors"]


async def test_a_body_over_the_cap_is_a_400(services: container.Services) -> None:
    application = api_app.create_app(services=services, limits=limits.Limits(max_body_bytes=2000))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(application), base_url="http://t"
    ) as http:
        small = await http.post("/graphql", json={"query": ME})
        assert small.status_code == 401  # through the gate (and then UNAUTHENTICATED)
        big = await http.post("/graphql", json={"query": ME, "variables": {"x": "a" * 3000}})
        assert "over 2000 bytes" in assert_bad_request(big)


async def test_malformed_bodies_get_graphql_shaped_400s(client: httpx.AsyncClient) -> None:
    assert "not JSON" in assert_bad_request(await post(client, b"{nope"))
    assert "query" in assert_bad_request(await post(client, b'{"query": 5}'))
    assert "variables" in assert_bad_request(
        await post(client, b'{"query": "{ me { login } }", "variables": [1]}')
    )
    plain = await client.post("/graphql", content=b"{ me { login } }")
    assert_bad_request(plain)


START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename
  ... on Refusal { code message }
  ... on InvalidInput { field }
} }"""


def start_input(**subject: Any) -> dict[str, Any]:
    return {
        "input": {
            "workflow": "expense-approval",
            "subject": {
                "type": "expense",
                "externalId": subject.pop("externalId", "EXP-1"),
                "attributes": subject.pop("attributes", dict(w.EXPENSE)),
            },
            **subject,
        }
    }


async def count(database_url: str, table: str) -> int:
    conn = await asyncpg.connect(database_url)
    try:
        return int(await conn.fetchval(f"SELECT count(*) FROM {table}"))
    finally:
        await conn.close()


@pytest.mark.parametrize(
    ("variables", "field"),
    [
        (start_input(externalId="x" * 201), "input.subject.externalId"),
        (start_input(externalId="EXP\x00-1"), "input.subject.externalId"),
        (start_input(externalId="EXP-\ud800"), "input.subject.externalId"),
        (start_input(idempotencyKey="k" * 201), "input.idempotencyKey"),
        (
            start_input(attributes={**w.EXPENSE, "note": "n" * 10_001}),
            "input.subject.attributes.note",
        ),
        (start_input(attributes={**w.EXPENSE, "note\x00": "n"}), "input.subject.attributes"),
        (
            start_input(attributes={**w.EXPENSE, "notes": ["n" * 9_000] * 40}),
            "input.subject.attributes.notes",
        ),
    ],
)
async def test_bad_strings_are_refused_before_sql_and_store_nothing(
    world: World, database_url: str, variables: dict[str, Any], field: str
) -> None:
    client, people = world.client, world.people
    response = await client.post(
        "/graphql",
        content=json.dumps({"query": START, "variables": variables}),
        headers={"content-type": "application/json", "authorization": f"Bearer {people['app']}"},
    )
    result = GraphQLResult(response)
    refusal = result.ok()["startRun"]
    assert refusal["code"] == "INVALID_INPUT"
    assert refusal["field"] == field
    assert len(refusal["message"]) < 400
    assert await count(database_url, "run") == 0
    assert await count(database_url, "subject") == 0


async def test_a_refused_complete_with_a_megabyte_string_stores_nothing(
    world: World, database_url: str
) -> None:
    client, people = world.client, world.people
    await w.start(client, people["app"], "expense-approval", "expense", "EXP-1", w.EXPENSE)
    slot = await w.slot_named(client, people["fiona"], "finance_review")
    await w.claim(client, people["fiona"], slot["id"])
    before = await count(database_url, "audit_event")
    for _ in range(3):
        refused = await w.complete(
            client, people["fiona"], slot["id"], {"decision": "query", "comment": "x" * 1_000_000}
        )
        assert refused["code"] == "INVALID_INPUT"
        assert "x" * 100 not in refused["message"]
    assert await count(database_url, "audit_event") == before
    conn = await asyncpg.connect(database_url)
    try:
        longest = await conn.fetchval("SELECT max(length(details::text)) FROM audit_event")
    finally:
        await conn.close()
    assert longest < 20_000


async def test_a_nul_in_an_inline_string_argument_is_invalid_input_not_internal(
    world: World,
) -> None:
    client, people = world.client, world.people
    result = await gql(
        client,
        'query { board(workflow: "expense\\u0000approval", first: 5) { totalCount } }',
        token=people["leah"],
    )
    assert result.error_codes == ["INVALID_INPUT"]


def gid(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "slot_id",
    [
        "not-an-id",
        gid("Slot:not-a-uuid"),
        gid("Slot:" + "1" * 500),
        gid("Slot:\x00"),
        "%%%",
        "",
    ],
)
async def test_malformed_ids_are_invalid_input_on_that_field(world: World, slot_id: str) -> None:
    client, people = world.client, world.people
    result = await gql(client, w.CLAIM, {"input": {"slotId": slot_id}}, token=people["fiona"])
    refusal = result.ok()["claim"]
    assert refusal["code"] == "INVALID_INPUT"
    queried = await gql(
        client, "query($id: ID!) { slot(id: $id) { id } }", {"id": slot_id}, token=people["fiona"]
    )
    assert queried.error_codes == ["INVALID_INPUT"]
    assert queried.data == {"slot": None}


async def test_an_out_of_range_notification_id_is_invalid_input(world: World) -> None:
    client, people = world.client, world.people
    result = await gql(
        client,
        "query($id: ID!) { node(id: $id) { id } }",
        {"id": gid("Notification:99999999999999999999999")},
        token=people["ada"],
    )
    assert result.error_codes == ["INVALID_INPUT"]


async def test_a_bad_nested_timeline_cursor_nulls_only_the_timeline(world: World) -> None:
    client, people = world.client, world.people
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-1", w.EXPENSE
    )
    run_id = started["run"]["id"]
    query = (
        "query($id: ID!, $after: String) { run(id: $id) { id state "
        "timeline(first: 5, after: $after) { edges { cursor } } } }"
    )
    for after in ["garbage", gid("99999999999999999999999"), gid("-1x"), gid("1\x1f2")]:
        result = await gql(client, query, {"id": run_id, "after": after}, token=people["leah"])
        assert result.error_codes == ["INVALID_INPUT"], after
        assert result.data is not None
        assert result.data["run"]["id"] == run_id
        assert result.data["run"]["timeline"] is None


@pytest.mark.parametrize(
    "after", ["garbage", gid("x\x1f1\x1fnot-a-uuid"), gid("\x1f99999999999\x1fz")]
)
async def test_bad_inbox_and_board_cursors_are_invalid_input(world: World, after: str) -> None:
    client, people = world.client, world.people
    inbox = await gql(
        client,
        "query($a: String) { inbox(first: 5, after: $a) { totalCount } }",
        {"a": after},
        token=people["fiona"],
    )
    assert inbox.error_codes == ["INVALID_INPUT"]
    board = await gql(
        client,
        'query($a: String) { board(workflow: "expense-approval", first: 5, after: $a) '
        "{ totalCount } }",
        {"a": after},
        token=people["leah"],
    )
    assert board.error_codes == ["INVALID_INPUT"]


@pytest.mark.parametrize(
    "after", ["garbage", gid("x"), gid("99999999999999999999999"), gid("1\x1f2")]
)
async def test_bad_cursors_of_lists_in_id_order_are_invalid_input_on_after(
    world: World, after: str
) -> None:
    """timers and notifications read their cursor by one helper (relay.after_id)."""
    client, people = world.client, world.people
    for field, who in (("timers", "leah"), ("notifications", "ada")):
        result = await gql(
            client,
            f"query($a: String) {{ {field}(first: 5, after: $a) {{ totalCount }} }}",
            {"a": after},
            token=people[who],
        )
        assert result.error_codes == ["INVALID_INPUT"], (field, after)


async def test_a_link_form_with_a_huge_or_nul_value_is_refused_and_stores_nothing(
    world: World, database_url: str
) -> None:
    client, people = world.client, world.people
    from tests.api import magic as m

    link, upload, _ = await m.vendor_link(client, people)
    path = m.path_of(link["url"])
    before = await count(database_url, "audit_event")
    for value in ("x" * 1_000_000, "bank\x00details"):
        page = await client.get(path)
        answer = await client.post(path, data={"document": value, "_page": m.page_token(page.text)})
        assert answer.status_code == 422
        assert "x" * 100 not in answer.text
    assert await count(database_url, "audit_event") == before
    slot = await m.slot_links(client, people["olga"], upload)
    assert slot["status"] == "OPEN"
    assert slot["links"][0]["usedAt"] is None


async def test_keys_inside_a_json_document_get_the_text_cap_not_a_column_size(world: World) -> None:
    client, people = world.client, world.people
    attributes = {**w.EXPENSE, "type": "t" * 150, "externalId": "e" * 300}
    result = await gql(client, START, start_input(attributes=attributes), token=people["app"])
    assert result.ok()["startRun"]["__typename"] == "StartRunSuccess"


async def test_a_huge_value_is_not_echoed_in_a_coercion_error(world: World) -> None:
    client, people = world.client, world.people
    query = "query($n: Int) { inbox(first: $n) { totalCount } }"
    result = await gql(client, query, {"n": "x" * 100_000}, token=people["fiona"])
    assert result.errors
    assert all(len(e["message"]) < 600 for e in result.errors)
    assert "x" * 100 not in str(result.body)


@pytest.mark.parametrize(
    "query",
    [
        "{ me " + "{ login " * 1500 + "}" * 1501,
        '{ board(workflow: "x", first: 1, after: ' + "[" * 1500 + "]" * 1500 + ") { totalCount } }",
        "{ slaReport(from: " + "{a: " * 1500 + "1" + "}" * 1500 + ") { totalCount } }",
    ],
)
async def test_deeply_nested_query_text_is_refused_without_a_500(world: World, query: str) -> None:
    client, people = world.client, world.people
    response = await client.post(
        "/graphql", json={"query": query}, headers={"Authorization": f"Bearer {people['ada']}"}
    )
    assert response.status_code < 500
    assert response.json()["errors"]
    assert "INTERNAL" not in response.text
