"""Every HTTP request gets one access line (logger ``taskflow.access``), never a token."""

from __future__ import annotations

import logging

import httpx
import pytest

from taskflow.api.graphql.common import relay
from taskflow.service.common import container
from tests.api import magic
from tests.conftest import gql

pytestmark = pytest.mark.anyio

ME = "query WhoAmI { me { id } }"
CLAIM = """mutation ClaimIt($slot: ID!) {
  claim(input: {slotId: $slot}) { __typename ... on NotFoundRefusal { code } }
}"""


def _access(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "taskflow.access"]


async def test_a_graphql_request_has_one_access_line_with_who_what_and_how_long(
    client: httpx.AsyncClient, people: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    token = people["fiona"]
    response = await client.post(
        "/graphql?debug=1",
        json={"query": ME, "operationName": "WhoAmI", "variables": {"secret": "s3cr3t"}},
        headers={"Authorization": f"Bearer {token}", "X-Request-Id": "req-42"},
    )
    assert response.status_code == 200
    (line,) = _access(caplog)
    assert line.levelname == "INFO"
    fields = vars(line)
    assert fields["request_id"] == "req-42"
    assert fields["method"] == "POST"
    assert fields["path"] == "/graphql"
    assert fields["status"] == 200
    assert isinstance(fields["duration_ms"], float)
    assert fields["duration_ms"] >= 0
    assert fields["principal"] == "fiona"
    assert fields["operation"] == "WhoAmI"
    assert fields["outcome"] == "ok"
    logged = caplog.text + " ".join(str(vars(r)) for r in caplog.records)
    assert token not in logged
    assert token.split(".")[-1] not in logged
    assert "s3cr3t" not in logged
    assert "me { id }" not in logged


async def test_refusals_and_errors_are_the_outcome_with_their_code(
    client: httpx.AsyncClient, people: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    refused = await gql(client, CLAIM, {"slot": "U2xvdDpub3BlCg=="}, token=people["fiona"])
    assert refused.ok()["claim"]["__typename"] == "InvalidInput"  # not a slot id
    anonymous = await gql(client, ME)
    assert anonymous.status == 401
    refusal, unauthenticated = _access(caplog)
    assert (refusal.operation, refusal.principal) == ("ClaimIt", "fiona")  # type: ignore[attr-defined]
    assert refusal.outcome == "refused:INVALID_INPUT"  # type: ignore[attr-defined]
    assert unauthenticated.outcome == "error:UNAUTHENTICATED"  # type: ignore[attr-defined]
    assert unauthenticated.principal is None  # type: ignore[attr-defined]
    assert unauthenticated.status == 401  # type: ignore[attr-defined]
    assert refusal.request_id != unauthenticated.request_id  # type: ignore[attr-defined]


async def test_pages_and_refused_bodies_are_logged_too(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    assert (await client.get("/health")).status_code == 200
    assert (await client.post("/graphql", content=b"not json")).status_code == 400
    health, bad = _access(caplog)
    assert (health.path, health.status) == ("/health", 200)  # type: ignore[attr-defined]
    assert (bad.path, bad.status) == ("/graphql", 400)  # type: ignore[attr-defined]
    assert not hasattr(health, "operation")


async def test_a_magic_link_path_is_logged_without_its_token(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    secret = "eyJzdWIiOiJhZGEiLCJleHAiOjk5OTk5OTk5OTl9.c2lnbmF0dXJlLW9mLXRoZS1saW5r"
    answered = await client.get(f"/l/{secret}")
    await client.get(f"/reports/sla?token={secret}")
    link, report = _access(caplog)
    assert link.path == "/l/{token}"  # type: ignore[attr-defined]
    assert link.status == answered.status_code  # type: ignore[attr-defined]
    assert report.path == "/reports/sla"  # type: ignore[attr-defined]
    ours = [r for r in caplog.records if r.name.startswith("taskflow")]  # not httpx's own
    assert secret not in " ".join(f"{r.getMessage()} {vars(r)}" for r in ours)


async def test_litestar_leaves_the_log_format_alone(services: container.Services) -> None:
    from taskflow.api import app as api_app

    # Litestar's default logging config would replace taskflow.logs' handler at startup.
    assert api_app.create_app(services=services).logging_config is None


async def test_a_refused_query_shares_its_request_id_with_the_access_line(
    client: httpx.AsyncClient, people: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    row = "edges { node { id run { id timeline(first: 100) { edges { node { kind } } } } } }"
    costly = "{ " + " ".join(f"w{i}: work(first: 100) {{ {row} }}" for i in range(30)) + " }"
    result = await gql(client, costly, token=people["leah"])
    assert result.error_codes == ["QUERY_TOO_COSTLY"]
    (line,) = _access(caplog)
    assert line.outcome == "error:QUERY_TOO_COSTLY"  # type: ignore[attr-defined]
    assert line.operation is None  # type: ignore[attr-defined]
    request_id = line.request_id  # type: ignore[attr-defined]
    refusals = [
        r.getMessage()
        for r in caplog.records
        if r.name == "taskflow.api" and "QUERY_TOO_COSTLY" in r.getMessage()
    ]
    assert refusals
    assert all(f"graphql request {request_id} refused" in m for m in refusals)


async def test_unmatched_routes_and_wrong_methods_get_an_access_line(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    missing = await client.get("/no/such/page", headers={"X-Request-Id": "req-404"})
    assert missing.status_code == 404
    wrong = await client.delete("/health")
    assert wrong.status_code == 405
    gone, refused = _access(caplog)
    assert (gone.path, gone.status, gone.request_id) == ("/no/such/page", 404, "req-404")  # type: ignore[attr-defined]
    assert gone.principal is None  # type: ignore[attr-defined]
    assert (refused.path, refused.status) == ("/health", 405)  # type: ignore[attr-defined]


async def test_report_and_link_pages_name_their_principal(
    client: httpx.AsyncClient, people: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    run = await magic.start_vendor(client, people)
    slot_id = next(iter((await magic.upload_slots(client, people, run["id"])).values()))
    link = await magic.minted(client, people, slot_id)
    caplog.set_level(logging.INFO)
    page = await client.get(magic.path_of(link["url"]))
    assert page.status_code == 200
    report = await client.get("/reports/sla", headers={"Authorization": f"Bearer {people['leah']}"})
    assert report.status_code == 200
    signed_in = await client.post(
        "/reports/sign-in",
        data={"token": people["max"]},
        headers={"Origin": "http://taskflow.test"},
    )
    assert signed_in.status_code == 303
    on_link, on_report, on_sign_in = _access(caplog)
    link_id = relay.from_global_id(link["link"]["id"], "id")[1]
    assert (on_link.path, on_link.principal) == ("/l/{token}", f"link:{link_id}")  # type: ignore[attr-defined]
    assert on_report.principal == "leah"  # type: ignore[attr-defined]
    assert on_sign_in.principal == "max"  # type: ignore[attr-defined]
    ours = " ".join(f"{r.getMessage()} {vars(r)}" for r in _access(caplog))
    assert link["token"] not in ours
    assert "onboarding@acme.example" not in ours
