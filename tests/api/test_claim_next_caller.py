"""claimNext checks its caller in the claim statement itself (one round trip), and a change
of the caller's principal takes effect at the very next claim.

The process keeps each principal it authenticated with the digest of its row
(``service/access/callers.py``); a claim for a kept principal does not read it first, and its
statement claims nothing unless the row is unchanged. Nothing invalidates the kept
principal when it changes: the digest does, so a change made by another process counts
the same as one made through this one.
"""

from __future__ import annotations

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

CLAIM_NEXT = """mutation { claimNext(input: {}) { __typename
  ... on SlotSuccess { slot { id name status holder } } ... on Refusal { code } } }"""
KEYED_CLAIM_NEXT = """mutation($key: String) { claimNext(input: {idempotencyKey: $key}) {
  __typename ... on SlotSuccess { slot { id holder } } ... on Refusal { code } } }"""
DEACTIVATE = """mutation($id: ID!) { deactivatePrincipal(input: {id: $id}) {
  __typename ... on Refusal { code } } }"""
SIGN_OUT = """mutation($input: SignOutEverywhereInput!) { signOutEverywhere(input: $input) {
  __typename ... on Refusal { code } } }"""
UPSERT = """mutation($input: UpsertPrincipalInput!) { upsertPrincipal(input: $input) {
  __typename ... on Refusal { code } } }"""


async def _expenses(client: httpx.AsyncClient, people: dict[str, str], count: int) -> None:
    for i in range(count):
        reference = f"EXP-{i:03d}"
        attributes = {**w.EXPENSE, "reference": reference}
        await w.start(client, people["app"], "expense-approval", "expense", reference, attributes)


async def _open_reviews(client: httpx.AsyncClient, people: dict[str, str]) -> int:
    """How many finance reviews are open (as Frank, another finance reviewer, sees them)."""
    return sum(1 for s in await w.inbox(client, people["frank"]) if s["status"] == "OPEN")


async def _claim_next(client: httpx.AsyncClient, token: str) -> dict[str, object]:
    answer = (await gql(client, CLAIM_NEXT, token=token)).ok()["claimNext"]
    assert isinstance(answer, dict)
    return answer


async def test_a_known_caller_claims_in_one_statement(
    client: httpx.AsyncClient,
    people: dict[str, str],
    counted: tuple[httpx.AsyncClient, Counter],  # noqa: F811
) -> None:
    http, counter = counted
    await _expenses(client, people, 3)
    first = await _claim_next(http, people["fiona"])  # authenticates her, and keeps her
    assert first["__typename"] == "SlotSuccess"
    counter.statements.clear()
    second = await _claim_next(http, people["fiona"])
    assert second["__typename"] == "SlotSuccess"
    assert second["slot"] == {**second["slot"], "status": "CLAIMED", "holder": "fiona"}
    # The claim, its deadlines, the check of her principal and the answer: one statement.
    assert len(counter.statements) == 1, counter.statements
    # The writes are the function claim_plain's, called from the statement that chose the slot.
    assert "FOR UPDATE SKIP LOCKED" in counter.statements[0]
    assert "claim_plain(" in counter.statements[0]


async def test_a_deactivation_refuses_the_next_claim_at_once(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await _expenses(client, people, 3)
    assert (await _claim_next(client, people["fiona"]))["__typename"] == "SlotSuccess"
    deactivated = await gql(
        client, DEACTIVATE, {"id": relay.to_global_id("Principal", "fiona")}, token=people["ada"]
    )
    assert deactivated.ok()["deactivatePrincipal"]["__typename"] == "DeactivatePrincipalSuccess"
    before = await _open_reviews(client, people)  # hers returned to the pool: 3

    refused = await gql(client, CLAIM_NEXT, token=people["fiona"])
    assert refused.status == 401
    assert refused.error_codes == ["UNAUTHENTICATED"]
    assert "deactivated" in refused.errors[0]["message"]
    assert await _open_reviews(client, people) == before  # nothing was claimed


async def test_signing_out_everywhere_refuses_the_old_token_at_once(
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> None:
    await _expenses(client, people, 3)
    assert (await _claim_next(client, people["fiona"]))["__typename"] == "SlotSuccess"
    frozen_clock.advance(timedelta(minutes=1))
    signed_out = await gql(client, SIGN_OUT, {"input": {}}, token=people["fiona"])
    assert signed_out.ok()["signOutEverywhere"]["__typename"] == "SignOutEverywhereSuccess"

    refused = await gql(client, CLAIM_NEXT, token=people["fiona"])
    assert refused.status == 401
    assert refused.error_codes == ["UNAUTHENTICATED"]
    assert await _open_reviews(client, people) == 2

    frozen_clock.advance(timedelta(minutes=1))
    fresh = services.staff_tokens.mint("fiona", frozen_clock.now())
    assert (await _claim_next(client, fresh))["__typename"] == "SlotSuccess"


async def test_a_role_change_counts_at_the_next_claim(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await _expenses(client, people, 3)
    assert (await _claim_next(client, people["fiona"]))["__typename"] == "SlotSuccess"
    no_longer = {"login": "fiona", "displayName": "Fiona Finance", "roles": ["employee"]}
    changed = await gql(client, UPSERT, {"input": no_longer}, token=people["ada"])
    assert changed.ok()["upsertPrincipal"]["__typename"] == "UpsertPrincipalSuccess"

    # Claimed with her kept roles, she would take a finance review: she may not any more.
    answer = await _claim_next(client, people["fiona"])
    assert answer == {"__typename": "NothingToClaim", "code": "NOTHING_TO_CLAIM"}
    assert await _open_reviews(client, people) == 2

    back = {**no_longer, "roles": ["finance"], "groups": ["finance-uk"]}
    assert (await gql(client, UPSERT, {"input": back}, token=people["ada"])).ok()
    assert (await _claim_next(client, people["fiona"]))["__typename"] == "SlotSuccess"
    assert await _open_reviews(client, people) == 1


async def test_a_change_written_by_another_process_counts_too(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    await _expenses(client, people, 3)
    assert (await _claim_next(client, people["fiona"]))["__typename"] == "SlotSuccess"
    # Another server process deactivates her: this one hears nothing of it.
    async with services.db.connection() as conn:
        assert await principal_rows.deactivate(conn, "fiona", services.clock.now()) is not None

    refused = await gql(client, CLAIM_NEXT, token=people["fiona"])
    assert refused.error_codes == ["UNAUTHENTICATED"]
    assert await _open_reviews(client, people) == 2  # she still holds one; nothing more


async def test_with_an_idempotency_key_the_caller_is_read_first(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    """A key's stored answer is never replayed to a caller who may no longer act."""
    await _expenses(client, people, 2)
    variables = {"key": "claim-next-1"}
    first = await gql(client, KEYED_CLAIM_NEXT, variables, token=people["fiona"])
    assert first.ok()["claimNext"]["__typename"] == "SlotSuccess"
    await gql(
        client, DEACTIVATE, {"id": relay.to_global_id("Principal", "fiona")}, token=people["ada"]
    )
    again = await gql(client, KEYED_CLAIM_NEXT, variables, token=people["fiona"])
    assert again.error_codes == ["UNAUTHENTICATED"]
