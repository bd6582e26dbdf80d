"""Staff authentication over HTTP: the token is the only way in."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from taskflow.service.access import tokens
from taskflow.service.common import container
from tests.conftest import gql

pytestmark = pytest.mark.anyio

ME = "{ me { id login displayName roles groups timeZone active } }"


async def test_a_valid_token_answers_me(client: httpx.AsyncClient, people: dict[str, str]) -> None:
    result = await gql(client, ME, token=people["fiona"])
    me = result.ok()["me"]
    assert me["login"] == "fiona"
    assert me["roles"] == ["finance"]
    assert me["timeZone"] == "Europe/London"


async def test_no_token_is_a_401_that_says_how_to_authenticate(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    result = await gql(client, ME)
    assert result.status == 401
    assert result.error_codes == ["UNAUTHENTICATED"]
    assert "Authorization: Bearer" in result.errors[0]["message"]


async def test_an_expired_token_is_refused(
    client: httpx.AsyncClient, services: container.Services, people: dict[str, str]
) -> None:
    token = services.staff_tokens.mint("fiona", services.clock.now(), timedelta(hours=1))
    assert (await gql(client, ME, token=token)).status == 200
    services.clock.advance(timedelta(hours=1))  # type: ignore[attr-defined]
    result = await gql(client, ME, token=token)
    assert result.status == 401
    assert "expired" in result.errors[0]["message"]


async def test_a_tampered_token_is_refused(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    token = people["fiona"]
    forged = token.replace(token.split(".")[0], "eyJzdWIiOiJhZGEiLCJleHAiOjk5OTk5OTk5OTl9")
    result = await gql(client, ME, token=forged)
    assert result.status == 401
    assert result.error_codes == ["UNAUTHENTICATED"]


async def test_a_token_of_a_retired_key_is_refused(
    client: httpx.AsyncClient, services: container.Services, people: dict[str, str]
) -> None:
    retired = tokens.StaffTokens(["a-key-no-longer-listed"]).mint("fiona", services.clock.now())
    result = await gql(client, ME, token=retired)
    assert result.status == 401
    assert "retired" in result.errors[0]["message"]


async def test_a_deactivated_principal_is_refused(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    deactivate = """mutation($id: ID!) { deactivatePrincipal(input: {id: $id}) {
        __typename ... on DeactivatePrincipalSuccess { principal { active } } } }"""
    fiona_id = (await gql(client, "{ me { id } }", token=people["fiona"])).ok()["me"]["id"]
    result = await gql(client, deactivate, {"id": fiona_id}, token=people["ada"])
    assert result.ok()["deactivatePrincipal"]["principal"]["active"] is False
    refused = await gql(client, ME, token=people["fiona"])
    assert refused.status == 401
    assert "deactivated" in refused.errors[0]["message"]
