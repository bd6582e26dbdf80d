"""Every HTTP request gets one access line (logger ``taskflow.access``), never a token."""

from __future__ import annotations

import logging

import httpx
import pytest

from taskflow.service import container
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
