"""Hot paths cost a fixed number of statements: an inbox page whatever its size (no N+1), a
claim whatever its deadlines."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import replace

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow.api import app as api_app
from taskflow.api.graphql.common import relay
from taskflow.core.slots.filters import SlotFilter
from taskflow.service.access import principals as principal_service
from taskflow.service.clocks import deadlines as deadline_service
from taskflow.service.common import container
from taskflow.service.slots import slots as slot_service
from taskflow.store.slots import claims
from tests import conftest
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
    database = await conftest.reconnect(services.db, query_logger=counter)
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
        await w.start_expense(client, people["app"], reference)

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
    # Authenticate, the page itself, one batched load of the runs behind it and one of
    # their slots (the access check of Slot.run, as if each run were fetched by id).
    assert len(counter.statements) == for_one
    # Each borrowed connection's transaction frames (BEGIN with the caller's workspace,
    # COMMIT: docs/workspaces.md) are not queries of the page.
    queries = [q for q in counter.statements if not q.startswith(("BEGIN", "COMMIT"))]
    assert len(queries) <= 4, queries


async def test_claim_next_is_one_statement_with_its_deadlines(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    """One autocommitted statement claims the slot and carries out its deadlines."""
    for reference in ("EXP-WARM", "EXP-CLAIM"):
        attributes = {**w.EXPENSE, "reference": reference}
        await w.start(client, people["app"], "expense-approval", "expense", reference, attributes)
    fiona = await principal_service.get(services, "fiona")
    assert fiona is not None

    counter = Counter()
    database = await conftest.reconnect(services.db, max_size=1, query_logger=counter)
    counted = replace(services, db=database)
    try:
        # The first claim on a connection also reads type information (once per connection).
        await slot_service.claim_next(counted, fiona, SlotFilter())
        [open_slot] = [s for s in await w.inbox(client, people["fiona"]) if s["status"] == "OPEN"]
        armed_before = await _timers(services, "armed")
        counter.statements.clear()
        claimed = await slot_service.claim_next(counted, fiona, SlotFilter())
    finally:
        await database.close()

    assert relay.to_global_id("Slot", claimed.id) == open_slot["id"]
    assert len(counter.statements) == 1, counter.statements
    assert "claim_plain(" in counter.statements[0]  # the function that writes
    # What the one statement did: the assigned clock met at the claim, its timers cancelled,
    # the finished clock still running, and the claim and the met clock on the timeline.
    readings = await deadline_service.readings(services, [claimed.id])
    clocks = {c.clock.milestone: c for c in readings[claimed.id]}
    assert clocks["assigned"].status == "met"
    assert clocks["assigned"].met_at == services.clock.now()
    assert clocks["finished"].status == "running"
    armed_after = await _timers(services, "armed")
    # The assigned milestone's breach and its escalation (the definition's second reminder).
    assert armed_before - armed_after == {
        f"{claimed.id}:at_risk:assigned",
        f"{claimed.id}:breach:assigned",
        f"{claimed.id}:reminder:1",
    }
    assert f"{claimed.id}:breach:finished" in armed_after
    lines = await w.timeline(client, people["leah"], relay.to_global_id("Run", claimed.run_id))
    assert [line["kind"] for line in lines][-2:] == ["slot.claimed", "clock.met"]


async def _timers(services: container.Services, status: str) -> set[str]:
    async with services.db.connection() as conn:
        rows = await conn.fetch("SELECT key FROM timer WHERE status = $1", status)
    return {r["key"] for r in rows}


async def test_claim_next_plans_its_slot_choice_per_call_and_writes_through_claim_plain(
    services: container.Services,
) -> None:
    """claimNext's statement chooses the slot, planned for its caller's keys (a generic plan
    of the choice walks the audience index and sorts: 2-3x slower), and leaves its writes
    to the function claim_plain, whose statements PL/pgSQL plans once per session (planned
    on every call as data-modifying CTEs they cost more than the claim; bench/README.md)."""
    async with services.db.single() as conn:
        assert await conn.fetchval("SHOW plan_cache_mode") == "auto"
    text, _ = claims.claim_next_plain_statement(
        "me", ["k"], SlotFilter(), services.clock.now(), services.catalog.claim_facts
    )
    assert "claim_plain(" in text
    assert not re.search(r"\bINSERT\s+INTO\b|\bUPDATE\s+\w+(\s+\w+)?\s+SET\b", text)


async def test_claim_plain_returns_the_slot_and_only_its_runs_head(
    services: container.Services,
) -> None:
    """The function returns the claimed slot and what the answer and the read rule need of its
    run (``runs.RunHead``), not the whole run, its subject row and its once values, which the
    server decoded for nothing (migration 2026-12-02T04:30; its arguments 2026-12-04T20:30's)."""
    async with services.db.single() as conn:
        names, types = await conn.fetchrow(
            "SELECT proargnames, proallargtypes::regtype[]::text[] FROM pg_proc "
            "WHERE proname = 'claim_plain'"
        )
    # Its four arguments (claimer, slot, instant, the catalog's claim facts), then its result.
    returned = dict(list(zip(names, types, strict=True))[4:])
    assert returned == {
        "claimed_slot": "slot",
        "claimed_definition_version": "integer",
        "claimed_run_state": "character varying",
        "claimed_run_status": "character varying",
        "claimed_subject_type": "character varying",
        "claimed_subject_external_id": "character varying",
        "claimed_subject_attributes": "jsonb",
    }
    text, _ = claims.claim_next_plain_statement(
        "me", ["k"], SlotFilter(), services.clock.now(), services.catalog.claim_facts
    )
    assert "step_once" not in text


CLAIM_NEXT = """mutation { claimNext(input: {}) { __typename
  ... on SlotSuccess { slot { id status holder version runState workflow
                              subject { externalId } } } } }"""


async def test_the_claim_next_mutation_answers_from_what_its_statement_returned(
    client: httpx.AsyncClient, people: dict[str, str], counted: tuple[httpx.AsyncClient, Counter]
) -> None:
    """The payload's slot is the row the claim returned, with its run: no slot or run is
    read again after the claim (it was: the slot twice more, the run and all its slots)."""
    http, counter = counted
    for reference in ("EXP-WARM", "EXP-CLAIM"):
        attributes = {**w.EXPENSE, "reference": reference}
        await w.start(client, people["app"], "expense-approval", "expense", reference, attributes)
    await gql(http, CLAIM_NEXT, token=people["fiona"])  # warm the pool: connections, codecs
    counter.statements.clear()
    answer = (await gql(http, CLAIM_NEXT, token=people["fiona"])).ok()["claimNext"]
    assert answer["__typename"] == "SlotSuccess"
    slot = answer["slot"]
    assert (slot["status"], slot["holder"], slot["runState"]) == ("CLAIMED", "fiona", "submitted")
    assert slot["subject"]["externalId"] in ("EXP-WARM", "EXP-CLAIM")
    after = [i for i, s in enumerate(counter.statements) if "claim_plain(" in s]
    assert len(after) == 1, counter.statements
    # Nothing after the claim statement reads a slot or a run.
    assert [
        s for s in counter.statements[after[0] + 1 :] if "FROM slot" in s or "FROM run" in s
    ] == []


async def test_the_claim_mutation_answers_from_what_its_statement_returned(
    client: httpx.AsyncClient, people: dict[str, str], counted: tuple[httpx.AsyncClient, Counter]
) -> None:
    """A claim by id answers from the row its guarded UPDATE returned: no read after it."""
    http, counter = counted
    for reference in ("EXP-WARM", "EXP-CLAIM"):
        attributes = {**w.EXPENSE, "reference": reference}
        await w.start(client, people["app"], "expense-approval", "expense", reference, attributes)
    first, second = [s["id"] for s in await w.inbox(client, people["fiona"])][:2]
    claim = """mutation($id: ID!) { claim(input: {slotId: $id}) { __typename
      ... on SlotSuccess { slot { id status holder runState } } } }"""
    await gql(http, claim, {"id": first}, token=people["fiona"])  # warm the pool
    counter.statements.clear()
    answer = (await gql(http, claim, {"id": second}, token=people["fiona"])).ok()["claim"]
    assert (answer["slot"]["status"], answer["slot"]["holder"]) == ("CLAIMED", "fiona")
    moved = [i for i, s in enumerate(counter.statements) if "UPDATE slot SET status" in s]
    assert len(moved) == 1, counter.statements
    assert [s for s in counter.statements[moved[0] + 1 :] if s.lstrip().startswith("SELECT")] == []
