"""The inbox checks a known caller in its page's statement itself (one round trip), and a
change of the caller's principal takes effect at the very next page.

As for ``claimNext`` (tests/api/test_claim_next_caller.py): the process keeps each
principal it authenticated with the digest of its row (``service/access/callers.py``); an
inbox query for a kept principal whose only root field is ``inbox`` does not read the
caller first: its page's statement lists nothing unless the row is unchanged, and an empty
page is answered the ordinary way (the caller authenticated, then the page read again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta

import httpx
import pytest

from taskflow import clock
from taskflow.api.graphql.common import relay
from taskflow.service.common import container
from taskflow.store.access import principals as principal_rows
from tests.api import workflows as w
from tests.api.test_inbox_queries import Counter, counted  # noqa: F401 (a fixture)
from tests.conftest import gql

pytestmark = pytest.mark.anyio

PAGE = """query { inbox(first: 10) { totalCount pageInfo { hasNextPage }
  edges { cursor node { id name status holder } } } }"""
WITH_ME = """query { me { login } inbox(first: 10) { edges { node { id } } } }"""
SIGN_OUT = """mutation($input: SignOutEverywhereInput!) { signOutEverywhere(input: $input) {
  __typename ... on Refusal { code } } }"""
UPSERT = """mutation($input: UpsertPrincipalInput!) { upsertPrincipal(input: $input) {
  __typename ... on Refusal { code } } }"""
DEACTIVATE = """mutation($id: ID!) { deactivatePrincipal(input: {id: $id}) {
  __typename ... on Refusal { code } } }"""


async def _expenses(client: httpx.AsyncClient, people: dict[str, str], count: int) -> None:
    for i in range(count):
        await w.start_expense(client, people["app"], f"EXP-{i:03d}")


async def test_a_known_callers_page_is_one_statement_and_the_same_page(
    counted: tuple[httpx.AsyncClient, Counter],  # noqa: F811
    client: httpx.AsyncClient,
    people: dict[str, str],
) -> None:
    http, counter = counted
    await _expenses(client, people, 3)
    first = await gql(http, PAGE, token=people["fiona"])  # authenticates her, and keeps her
    await asyncio.sleep(0)  # asyncpg hands statements to its loggers on the next loop pass
    counter.statements.clear()
    again = await gql(http, PAGE.replace("totalCount ", ""), token=people["fiona"])
    await asyncio.sleep(0)
    # The page and the check of her principal: one statement. Behind a pooler (no session of
    # ours to keep: docs/workspaces.md) it is framed by a BEGIN naming her workspace and a
    # COMMIT; on a direct connection the session already names it.
    framed = [q for q in counter.statements if q.startswith(("BEGIN", "COMMIT"))]
    ours = [q for q in counter.statements if q not in framed]
    assert len(ours) == 1, counter.statements
    assert "md5(pr::text)" in ours[0]
    assert len(framed) in (0, 2), counter.statements
    page = again.ok()["inbox"]
    assert page["edges"] == first.ok()["inbox"]["edges"]
    assert len(page["edges"]) == first.ok()["inbox"]["totalCount"] == 3
    assert page["pageInfo"] == {"hasNextPage": False}


async def _deactivated_elsewhere(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> str:
    """Another server process deactivates her: this one hears nothing of it."""
    async with services.db.connection() as conn:
        assert await principal_rows.deactivate(conn, "fiona", services.clock.now()) is not None
    return "deactivated"


async def _signed_out_everywhere(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> str:
    assert isinstance(services.clock, clock.FrozenClock)
    services.clock.advance(timedelta(minutes=1))
    answer = await gql(client, SIGN_OUT, {"input": {}}, token=people["fiona"])
    assert answer.ok()["signOutEverywhere"]["__typename"] == "SignOutEverywhereSuccess"
    return "signed out everywhere"


@pytest.mark.parametrize("change", [_deactivated_elsewhere, _signed_out_everywhere])
async def test_a_revoked_caller_is_refused_at_the_very_next_page(
    change: Callable[[httpx.AsyncClient, dict[str, str], container.Services], Awaitable[str]],
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: container.Services,
) -> None:
    await _expenses(client, people, 2)
    assert len((await gql(client, PAGE, token=people["fiona"])).ok()["inbox"]["edges"]) == 2
    said = await change(client, people, services)

    refused = await gql(client, PAGE, token=people["fiona"])
    assert (refused.status, refused.error_codes) == (401, ["UNAUTHENTICATED"])
    assert said in refused.errors[0]["message"]
    # A token minted afterwards lists again after a sign-out (the kept row is stale: the
    # page lists nothing for it, so she is read afresh), never after a deactivation.
    frozen = services.clock
    assert isinstance(frozen, clock.FrozenClock)
    frozen.advance(timedelta(minutes=1))
    fresh = await gql(client, PAGE, token=services.staff_tokens.mint("fiona", frozen.now()))
    if change is _signed_out_everywhere:
        assert len(fresh.ok()["inbox"]["edges"]) == 2
    else:
        assert fresh.error_codes == ["UNAUTHENTICATED"]


async def test_a_role_change_counts_at_the_next_page(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await _expenses(client, people, 2)
    assert len((await gql(client, PAGE, token=people["fiona"])).ok()["inbox"]["edges"]) == 2
    no_longer = {"login": "fiona", "displayName": "Fiona Finance", "roles": ["employee"]}
    changed = await gql(client, UPSERT, {"input": no_longer}, token=people["ada"])
    assert changed.ok()["upsertPrincipal"]["__typename"] == "UpsertPrincipalSuccess"

    # Listed with her kept roles, she would see the finance reviews: she may not any more.
    page = (await gql(client, PAGE, token=people["fiona"])).ok()["inbox"]
    assert page == {"totalCount": 0, "pageInfo": {"hasNextPage": False}, "edges": []}


async def test_beside_another_root_field_the_caller_is_read_first(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    """``me`` would otherwise answer for a presumed caller the page never checked."""
    await _expenses(client, people, 1)
    assert (await gql(client, WITH_ME, token=people["fiona"])).ok()["me"] == {"login": "fiona"}
    deactivated = await gql(
        client, DEACTIVATE, {"id": relay.to_global_id("Principal", "fiona")}, token=people["ada"]
    )
    assert deactivated.ok()["deactivatePrincipal"]["__typename"] == "DeactivatePrincipalSuccess"

    refused = await gql(client, WITH_ME, token=people["fiona"])
    assert refused.status == 401
    assert set(refused.error_codes) == {"UNAUTHENTICATED"}


async def test_a_refused_argument_is_refused_after_the_caller_as_ever(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    await _expenses(client, people, 1)
    assert (await gql(client, PAGE, token=people["fiona"])).ok()["inbox"]["edges"]
    too_many = PAGE.replace("first: 10", "first: 1000")
    invalid = await gql(client, too_many, token=people["fiona"])
    assert invalid.error_codes == ["INVALID_INPUT"]
    async with services.db.connection() as conn:
        assert await principal_rows.deactivate(conn, "fiona", services.clock.now()) is not None
    # Deactivated: the caller is refused before the argument, as for an unknown caller.
    assert (await gql(client, too_many, token=people["fiona"])).error_codes == ["UNAUTHENTICATED"]
