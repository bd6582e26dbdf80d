"""``POST /graphql``'s own path (``api/graphql_post.py``: the parsed body executed and answered
without strawberry's HTTP view) answers every request as strawberry's view does: the same
status, headers and bytes, and the same access line."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow.api import app as api_app
from taskflow.api import graphql_post
from taskflow.service.common import container
from taskflow.store.common import db
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

CLAIM_NEXT = """mutation { claimNext(input: {}) { __typename
  ... on SlotSuccess { slot { id name status holder } } ... on Refusal { code message } } }"""
CLAIM = """mutation($id: ID!) { claim(input: {slotId: $id}) { __typename
  ... on SlotSuccess { slot { id status holder } } ... on Refusal { code message } } }"""
RELEASE = """mutation($id: ID!) { release(input: {slotId: $id}) { __typename } }"""
TWO = """query Me { me { login } } query Inbox($first: Int) { inbox(first: $first) {
  totalCount edges { node { id name status } } } }"""
DEEP = "{ me { login } " + "inbox { edges { node { run { " * 8 + "id" + " } } } }" * 8 + " }"

Request = dict[str, Any]
#: An access line's fields compared (all but its duration).
FIELDS = ("status", "principal", "operation", "outcome", "request_id")


@contextlib.asynccontextmanager
async def _client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    transport = ASGIWebSocketTransport(app)
    async with httpx.AsyncClient(transport=transport, base_url="http://taskflow.test") as http:
        yield http


def _lines(caplog: pytest.LogCaptureFixture) -> list[tuple[Any, ...]]:
    """The access lines logged so far (all but their duration), then forgotten."""
    found = [
        (r.getMessage(), *(getattr(r, name, None) for name in FIELDS))
        for r in caplog.records
        if r.name == "taskflow.access"
    ]
    caplog.clear()
    return found


@dataclass
class Pair:
    """A client of this app and one of the same app answering through strawberry's view."""

    ours: httpx.AsyncClient
    theirs: httpx.AsyncClient
    caplog: pytest.LogCaptureFixture

    async def same(
        self, request: Request, between: Callable[[], Awaitable[Any]] | None = None
    ) -> httpx.Response:
        """Sends ``request`` through both (``between`` runs after ours, to give theirs the
        same state) and checks status, headers, bytes and the access line are the same."""
        self.caplog.clear()
        mine = await self.ours.post("/graphql", **request)
        my_line = _lines(self.caplog)
        if between is not None:
            await between()
            self.caplog.clear()
        stock = await self.theirs.post("/graphql", **request)
        assert (mine.status_code, mine.headers.raw, mine.content) == (
            stock.status_code,
            stock.headers.raw,
            stock.content,
        )
        assert my_line == _lines(self.caplog)
        assert len(my_line) == 1
        return mine


Paired = Callable[[container.Services], contextlib.AbstractAsyncContextManager[Pair]]


@pytest.fixture
def paired(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> Paired:
    """Both apps on the given services, their access lines captured."""
    caplog.set_level(logging.INFO, logger="taskflow.access")

    @contextlib.asynccontextmanager
    async def both(services: container.Services) -> AsyncIterator[Pair]:
        ours = api_app.create_app(services=services)
        with monkeypatch.context() as patched:
            patched.setattr(graphql_post, "FAST_PATH", False)
            theirs = api_app.create_app(services=services)
        async with _client(ours) as mine, _client(theirs) as stock:
            yield Pair(mine, stock, caplog)

    return both


def _as(token: str | None, body: Any = None, **headers: str) -> Request:
    sent = {"X-Request-Id": "same-request", **headers}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    if isinstance(body, bytes):
        return {"content": body, "headers": {"Content-Type": "application/json", **sent}}
    return {"json": body, "headers": sent}


async def test_both_paths_answer_alike(
    services: container.Services,
    people: dict[str, str],
    paired: Paired,
) -> None:
    async with paired(services) as pair:
        ours = pair.ours
        await w.start(ours, people["app"], "expense-approval", "expense", "EXP-1", w.EXPENSE)
        slot = await w.slot_named(ours, people["fiona"], "finance_review")
        fiona, sam = people["fiona"], people["sam"]

        async def released() -> None:
            result = await gql(ours, RELEASE, {"id": slot["id"]}, token=fiona)
            assert result.ok()["release"]["__typename"] == "SlotSuccess"

        # claimNext: a success (released between, so theirs claims the same slot), a refusal.
        claimed = await pair.same(_as(fiona, {"query": CLAIM_NEXT}), released)
        assert claimed.json()["data"]["claimNext"]["slot"]["holder"] == "fiona"
        refused = await pair.same(_as(sam, {"query": CLAIM_NEXT}))
        assert refused.json()["data"]["claimNext"]["__typename"] != "SlotSuccess"
        # Variables, a typed refusal (held by fiona), operationName choosing one of two.
        taken = _as(sam, {"query": CLAIM, "variables": {"id": slot["id"]}})
        assert (await pair.same(taken)).json()["data"]["claim"]["code"]
        for name, variables in (("Me", None), ("Inbox", {"first": 1})):
            chosen = {"query": TWO, "operationName": name, "variables": variables}
            assert "errors" not in (await pair.same(_as(fiona, chosen))).json()
        cases: list[Request] = [
            _as(fiona, {"query": TWO}),  # two operations, none named: strawberry's 400
            _as(fiona, {"query": TWO, "operationName": "Nope"}),
            _as(fiona, {"query": "{ me { login "}),  # a parse error
            _as(fiona, {"query": "{ me { nope } }"}),  # a validation error
            _as(fiona, {"query": "query($n: Int!) { inbox(first: $n) { totalCount } }"}),
            _as(fiona, {"query": '{ slot(id: "nope") { id } }'}),  # a resolver's error
            _as(None, {"query": "{ me { login } }"}),  # unauthenticated: a 401 it sets
            _as("not-a-token", {"query": CLAIM_NEXT}),
            _as(fiona, {"query": "subscription { nope }"}),
            _as(fiona, {"query": DEEP}),  # over the depth cap
            _as(fiona, {"query": "{ me { login } }", "extensions": {"a": 1}}),
            _as(fiona, {"query": ""}),
            _as(fiona, b'{"query": "{ me { login } }", "variables": [1]}'),  # the guard's 400
            _as(fiona, b"x" * (2 * 1024 * 1024)),  # over the body cap
            # A streaming Accept header: strawberry's view on both.
            _as(fiona, {"query": "{ me { login } }"}, Accept="multipart/mixed"),
        ]
        for case in cases:
            await pair.same(case)


async def test_a_status_and_header_a_resolver_sets_are_kept(
    database_url: str, services: container.Services, people: dict[str, str], paired: Paired
) -> None:
    """An outage: the errors extension sets 503 and Retry-After on the sub-response."""
    closed = await db.Database.connect(database_url, min_size=1, max_size=2)
    await closed.close()
    down = container.build(closed, services.settings, services.clock)
    async with paired(down) as pair:
        for query in ("{ me { login } }", CLAIM_NEXT):
            answer = await pair.same(_as(people["fiona"], {"query": query}))
            assert answer.status_code == 503
            assert answer.headers["retry-after"] == "5"


async def test_the_view_is_not_asked_for_a_parsed_body(
    client: httpx.AsyncClient, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The common request takes the short path: neither strawberry's ``run`` nor Litestar's
    route handling is called (no streaming transport is served, so none is one it must leave
    to the view); a page's route is handled by Litestar as before."""
    from litestar.routes.http import HTTPRoute
    from strawberry.http.async_base_view import AsyncBaseHTTPView

    ran: list[str] = []

    def counting(kind: type[Any], name: str) -> None:
        original = getattr(kind, name)

        async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            ran.append(name)
            return await original(self, *args, **kwargs)

        monkeypatch.setattr(kind, name, counted)

    counting(AsyncBaseHTTPView, "run")
    counting(HTTPRoute, "_get_response_for_request")
    assert (await gql(client, "{ me { login } }", token=people["fiona"])).ok()
    assert ran == []
    assert (await client.get("/health")).status_code == 200
    assert ran == ["_get_response_for_request"]


def test_the_context_reads_headers_as_litestar_does() -> None:
    from litestar.datastructures import Headers

    raw = [
        (b"authorization", b"Bearer one"),
        (b"x-request-id", b"r-1"),
        (b"Authorization", b"Bearer two"),
        (b"x-caf\xe9", b"caf\xe9"),
    ]
    scope: Any = {"type": "http", "headers": raw}
    ours = graphql_post.first_headers(scope)
    theirs = Headers.from_scope(scope)
    for name in ("authorization", "x-request-id", "x-café", "absent"):
        assert ours.get(name) == theirs.get(name)


NAMED_CLAIM_NEXT = """mutation Take { got: claimNext(input: {}) {
  ... on Refusal { message code } kind: __typename
  ... on SlotSuccess { slot { holder __typename state id workflow status name } } } }"""


def _executions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The operations strawberry executes from now on (its ``Schema.execute``)."""
    from taskflow.api.graphql.common import guards

    ran: list[str] = []
    original = guards.QuietSchema.execute

    async def counted(self: Any, query: str | None, *args: Any, **kwargs: Any) -> Any:
        ran.append(query or "")
        return await original(self, query, *args, **kwargs)

    monkeypatch.setattr(guards.QuietSchema, "execute", counted)
    return ran


async def test_a_plain_claim_next_is_answered_from_its_plan_as_strawberry_answers_it(
    services: container.Services,
    people: dict[str, str],
    paired: Paired,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """claimNext's document, seen once, is answered without strawberry's execution
    (``api/graphql/claim_fast.py``): the same bytes, headers and access line as strawberry's
    view, for a success and for a refusal (which strawberry answers from the claim made)."""
    async with paired(services) as pair:
        ours = pair.ours
        await w.start(ours, people["app"], "expense-approval", "expense", "EXP-1", w.EXPENSE)
        fiona, sam = people["fiona"], people["sam"]
        release = _released(ours, fiona)
        sent = ((CLAIM_NEXT, None), (NAMED_CLAIM_NEXT, "Take"))
        for query, name in sent:  # each seen once (and so planned, for its operation name)
            await release()
            await pair.same(_as(fiona, {"query": query, "operationName": name}), release)
            await pair.same(_as(sam, {"query": query, "operationName": name}))
        ran = _executions(monkeypatch)
        for query, name in sent:
            await release()
            ran.clear()
            sent = _as(fiona, {"query": query, "operationName": name})
            answer = (await pair.same(sent, release)).json()["data"]
            assert ran.count(query) == 1  # strawberry's view only, for theirs
            slot = next(iter(answer.values()))["slot"]
            assert (slot["holder"], slot["status"]) == ("fiona", "CLAIMED")
            ran.clear()
            refused = await pair.same(_as(sam, {"query": query, "operationName": name}))
            assert "NOTHING_TO_CLAIM" in refused.text
            assert ran.count(query) == 2  # ours, from the claim it made; theirs
        # Variables, request extensions: executed as before.
        await release()
        ran.clear()
        await pair.same(_as(fiona, {"query": CLAIM_NEXT, "variables": {"a": 1}}), release)
        assert ran.count(CLAIM_NEXT) == 2


def _released(client: httpx.AsyncClient, token: str) -> Callable[[], Awaitable[None]]:
    """Releases every slot the token's principal holds (so the other app claims the same)."""

    async def release() -> None:
        for slot in await w.inbox(client, token):
            if slot["status"] == "CLAIMED":
                result = await gql(client, RELEASE, {"id": slot["id"]}, token=token)
                assert result.ok()["release"]["__typename"] == "SlotSuccess"

    return release


async def test_a_claim_handed_to_strawberry_is_made_once(
    services: container.Services, people: dict[str, str], client: httpx.AsyncClient
) -> None:
    """When the planned claim does not succeed for the presumed caller (their row changed),
    strawberry's execution answers from the claim made: authenticated afresh, the caller
    claims one slot, not two."""
    from taskflow.store.access import principals as principal_rows

    for i in range(3):
        attributes = {**w.EXPENSE, "reference": f"EXP-{i}"}
        await w.start(client, people["app"], "expense-approval", "expense", f"EXP-{i}", attributes)
    fiona = people["fiona"]
    for _ in range(2):  # seen (planned), then claimed on the plan
        assert (await gql(client, CLAIM_NEXT, token=fiona)).ok()["claimNext"]["slot"]
    async with services.db.connection() as conn:  # her row changes behind this process
        await conn.execute("UPDATE principal SET display_name = 'F.' WHERE id = 'fiona'")
        assert await principal_rows.get(conn, "fiona") is not None
    answer = (await gql(client, CLAIM_NEXT, token=fiona)).ok()["claimNext"]
    assert answer["slot"]["holder"] == "fiona"
    held = [s for s in await w.inbox(client, fiona) if s["status"] == "CLAIMED"]
    assert len(held) == 3  # two before, one now
