"""Admin management of principals through GraphQL, with typed refusals."""

from __future__ import annotations

import pytest

from tests.api.conftest import World
from tests.conftest import gql

pytestmark = pytest.mark.anyio

UPSERT = """mutation($input: UpsertPrincipalInput!) { upsertPrincipal(input: $input) {
  __typename
  ... on UpsertPrincipalSuccess { created principal { login roles attributes } }
  ... on Refusal { code message }
  ... on InvalidInput { field }
} }"""

PAGE = """query($first: Int!, $after: String, $filter: PrincipalFilter) {
  principals(first: $first, after: $after, filter: $filter) {
    totalCount pageInfo { hasNextPage endCursor } edges { node { login } } } }"""


async def test_admin_pages_through_principals(world: World) -> None:
    client, people = world.client, world.people
    logins: list[str] = []
    after = None
    while True:
        page = (await gql(client, PAGE, {"first": 5, "after": after}, token=people["ada"])).ok()
        connection = page["principals"]
        assert connection["totalCount"] == len(people)
        logins += [edge["node"]["login"] for edge in connection["edges"]]
        if not connection["pageInfo"]["hasNextPage"]:
            break
        after = connection["pageInfo"]["endCursor"]
    assert logins == sorted(people)


async def test_filters_by_role(world: World) -> None:
    client, people = world.client, world.people
    page = await gql(
        client, PAGE, {"first": 50, "filter": {"role": "finance"}}, token=people["ada"]
    )
    logins = [e["node"]["login"] for e in page.ok()["principals"]["edges"]]
    assert logins == ["fiona", "frank", "leah", "sam"]


async def test_non_admins_cannot_list_principals(world: World) -> None:
    client, people = world.client, world.people
    result = await gql(client, PAGE, {"first": 5}, token=people["fiona"])
    assert result.error_codes == ["FORBIDDEN"]
    assert "admin" in result.errors[0]["message"]


async def test_first_is_bounded(world: World) -> None:
    client, people = world.client, world.people
    result = await gql(client, PAGE, {"first": 1000}, token=people["ada"])
    assert result.error_codes == ["INVALID_INPUT"]


async def test_admin_creates_and_updates_a_principal(world: World) -> None:
    client, people = world.client, world.people
    new = {
        "login": "nina",
        "displayName": "Nina",
        "roles": ["finance"],
        "attributes": {"region": "us"},
    }
    created = (await gql(client, UPSERT, {"input": new}, token=people["ada"])).ok()[
        "upsertPrincipal"
    ]
    assert created == {
        "__typename": "UpsertPrincipalSuccess",
        "created": True,
        "principal": {"login": "nina", "roles": ["finance"], "attributes": {"region": "us"}},
    }
    new["roles"] = ["finance", "lead"]
    updated = (await gql(client, UPSERT, {"input": new}, token=people["ada"])).ok()[
        "upsertPrincipal"
    ]
    assert updated["created"] is False
    assert updated["principal"]["roles"] == ["finance", "lead"]


async def test_non_admin_upsert_is_a_typed_refusal_and_changes_nothing(world: World) -> None:
    client, people = world.client, world.people
    result = await gql(
        client,
        UPSERT,
        {"input": {"login": "fiona", "displayName": "Pwned", "roles": ["admin"]}},
        token=people["fiona"],
    )
    refusal = result.ok()["upsertPrincipal"]
    assert refusal["__typename"] == "NotAllowed"
    assert refusal["code"] == "FORBIDDEN"
    me = (await gql(client, "{ me { displayName roles } }", token=people["fiona"])).ok()["me"]
    assert me == {"displayName": "Fiona Finance", "roles": ["finance"]}


async def test_invalid_input_names_the_field(world: World) -> None:
    client, people = world.client, world.people
    result = await gql(
        client, UPSERT, {"input": {"login": "x y", "displayName": "X"}}, token=people["ada"]
    )
    refusal = result.ok()["upsertPrincipal"]
    assert refusal["__typename"] == "InvalidInput"
    assert refusal["field"] == "id"
    assert "is not valid" in refusal["message"]


async def test_node_answers_only_what_the_caller_may_see(world: World) -> None:
    client, people = world.client, world.people
    node = "query($id: ID!) { node(id: $id) { id ... on Principal { login } } }"
    ada_id = (await gql(client, "{ me { id } }", token=people["ada"])).ok()["me"]["id"]
    fiona_id = (await gql(client, "{ me { id } }", token=people["fiona"])).ok()["me"]["id"]
    assert (await gql(client, node, {"id": fiona_id}, token=people["fiona"])).ok()["node"][
        "login"
    ] == "fiona"
    assert (await gql(client, node, {"id": fiona_id}, token=people["ada"])).ok()["node"][
        "login"
    ] == "fiona"
    # Another principal's id answers exactly as an id that does not exist.
    assert (await gql(client, node, {"id": ada_id}, token=people["fiona"])).ok()["node"] is None
    assert (await gql(client, node, {"id": "bm9wZTpub3Bl"}, token=people["fiona"])).ok()[
        "node"
    ] is None
    # An id taskflow never gave out is refused on that field (edge input limits).
    malformed = await gql(client, node, {"id": "!!"}, token=people["fiona"])
    assert malformed.error_codes == ["INVALID_INPUT"]
    assert malformed.data == {"node": None}


async def test_deactivating_yourself_is_refused(world: World) -> None:
    client, people = world.client, world.people
    ada_id = (await gql(client, "{ me { id } }", token=people["ada"])).ok()["me"]["id"]
    result = await gql(
        client,
        """mutation($id: ID!) { deactivatePrincipal(input: {id: $id}) {
            __typename ... on Refusal { message } } }""",
        {"id": ada_id},
        token=people["ada"],
    )
    assert result.ok()["deactivatePrincipal"] == {
        "__typename": "InvalidInput",
        "message": "You cannot deactivate yourself; ask another administrator.",
    }
