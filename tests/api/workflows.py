"""GraphQL operations and helpers shared by the workflow tests."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import gql

START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename
  ... on StartRunSuccess { created run { id state status workflow correlationKey } }
  ... on Refusal { code message }
  ... on RunExists { runId }
  ... on WorkspaceLimitReached { limit allowed current }
} }"""

INBOX = """query($first: Int, $after: String, $filter: InboxFilter) {
  inbox(first: $first, after: $after, filter: $filter) {
    pageInfo { hasNextPage endCursor }
    edges { node { id name label status holder priority version workflow runState
                   subject { type externalId attributes }
                   fields { name type required choices } } } } }"""

CLAIM = """mutation($input: ClaimInput!) { claim(input: $input) {
  __typename
  ... on SlotSuccess { slot { id status holder version } }
  ... on Refusal { code message }
  ... on AlreadyClaimed { holder claimedAt }
  ... on StaleVersion { currentVersion }
} }"""

COMPLETE = """mutation($input: CompleteInput!) { complete(input: $input) {
  __typename
  ... on CompleteSuccess { slot { status payload satisfiedBy } run { state status } }
  ... on Refusal { code message }
  ... on PayloadInvalid { problems { field reason } }
  ... on NotHolder { holder }
} }"""

TIMELINE = """query($id: ID!, $kinds: [String!]) {
  run(id: $id) { state timeline(first: 100, kinds: $kinds) {
  totalCount edges { node { kind actor reason details } } } } }"""

#: Example subjects shared by the workflow tests (see the examples' docstrings).
TICKET = {
    "reference": "T-81723",
    "title": "Cannot export invoices",
    "priority": "P2",
    "team": "billing-support",
    "customer_email": "ana@example.com",
}
VENDOR = {
    "vendor_number": "V-20931",
    "legal_name": "Acme Logistics GmbH",
    "country": "DE",
    "vat_number": "DE123456789",
    "contact_email": "onboarding@acme.example",
    "contact_name": "Anna Acme",
    "required_documents": ["certificate of incorporation", "bank details"],
    "handles_personal_data": True,
}
EXPENSE = {
    "reference": "EXP-2026-0042",
    "amount": 1250.0,
    "currency": "GBP",
    "submitted_by": "sam",
    "department": "sales",
    "receipts": 3,
}


async def start(
    client: httpx.AsyncClient,
    token: str,
    workflow: str,
    subject_type: str,
    external_id: str,
    attributes: dict[str, Any],
    key: str | None = None,
) -> dict[str, Any]:
    variables = {
        "input": {
            "workflow": workflow,
            "subject": {"type": subject_type, "externalId": external_id, "attributes": attributes},
            "idempotencyKey": key,
        }
    }
    return (await gql(client, START, variables, token=token)).ok()["startRun"]


async def start_expense(
    client: httpx.AsyncClient, token: str, reference: str, **changes: Any
) -> dict[str, Any]:
    """Start an expense-approval run for expense ``reference`` (``EXPENSE`` with ``changes``)."""
    attributes = {**EXPENSE, "reference": reference, **changes}
    return await start(client, token, "expense-approval", "expense", reference, attributes)


async def inbox(client: httpx.AsyncClient, token: str, **filters: Any) -> list[dict[str, Any]]:
    result = await gql(client, INBOX, {"first": 100, "filter": filters or None}, token=token)
    return [edge["node"] for edge in result.ok()["inbox"]["edges"]]


async def slot_named(
    client: httpx.AsyncClient, token: str, name: str, external_id: str | None = None
) -> dict[str, Any]:
    """The one slot called ``name`` in the inbox (of the subject ``external_id`` if given)."""
    found = [
        s
        for s in await inbox(client, token)
        if s["name"] == name and (external_id is None or s["subject"]["externalId"] == external_id)
    ]
    assert len(found) == 1, f"expected one {name!r} in the inbox, got {found}"
    return found[0]


async def claim(
    client: httpx.AsyncClient, token: str, slot_id: str, version: int | None = None
) -> dict[str, Any]:
    result = await gql(
        client, CLAIM, {"input": {"slotId": slot_id, "expectedVersion": version}}, token=token
    )
    return result.ok()["claim"]


async def complete(
    client: httpx.AsyncClient, token: str, slot_id: str, payload: dict[str, Any]
) -> dict[str, Any]:
    result = await gql(
        client, COMPLETE, {"input": {"slotId": slot_id, "payload": payload}}, token=token
    )
    return result.ok()["complete"]


async def pay(client: httpx.AsyncClient, people: dict[str, str]) -> dict[str, Any]:
    """Paul completes the expense's open payment slot (reference PAY-9): the answer."""
    payment = await slot_named(client, people["paul"], "payment")
    return await complete(
        client,
        people["paul"],
        payment["id"],
        {"payment_reference": "PAY-9", "paid_on": "2026-12-02"},
    )


async def timeline(
    client: httpx.AsyncClient, token: str, run_id: str, kinds: list[str] | None = None
) -> list[dict[str, Any]]:
    result = await gql(client, TIMELINE, {"id": run_id, "kinds": kinds}, token=token)
    return [edge["node"] for edge in result.ok()["run"]["timeline"]["edges"]]


async def two_pages(
    client: httpx.AsyncClient,
    query: str,
    field: str,
    token: str,
    first: int,
    then: int | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The connection ``field`` that ``query`` (taking ``$first`` and ``$after``) reads, in two
    pages: the first ``first`` items, then up to ``then`` (default ``first``) after its end
    cursor."""
    page = (await gql(client, query, {"first": first}, token=token)).ok()[field]
    after = {"first": then or first, "after": page["pageInfo"]["endCursor"]}
    return page, (await gql(client, query, after, token=token)).ok()[field]
