"""The agent tools over HTTP (``/mcp``), spoken to by the MCP SDK's own client.

What a read tool answers is what the same principal's GraphQL query answers; a write tool
is refused, changing nothing, without the principal's ``agent`` opt-in or on a stale
version; a write that goes through shows ``mcp:<client>`` on the run's timeline.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp.client.client import Client

from taskflow.api.mcp import documents
from taskflow.service.access import principals
from taskflow.service.common import container
from tests.api import mcp_client
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

READ_TOOLS = {"inbox", "work", "board", "run", "needsAttention", "slaReport"}
#: Each write tool's (destructiveHint, idempotentHint).
WRITE_TOOLS = {
    "claim": (False, False),
    "release": (True, False),
    "assign": (True, False),
    "complete": (True, False),
    "raiseEvent": (True, False),
    "retryStep": (False, False),
    "pauseClocks": (False, True),
    "resumeClocks": (False, True),
}
SLOT = """query($id: ID!) { slot(id: $id) { status holder version } }"""


async def _graphql(
    client: httpx.AsyncClient, token: str, document: str, variables: dict[str, Any]
) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(client, document, variables, token=token)).ok()
    return found


async def _on_slot(agent: Client, tool: str, slot_id: str, version: int, reason: str) -> Any:
    """Call the write tool ``tool`` on one slot; its raw result (read by answer or refusal)."""
    return await agent.call_tool(
        tool, {"slotId": slot_id, "expectedVersion": version, "reason": reason}
    )


async def _still_open(client: httpx.AsyncClient, token: str, slot_id: str) -> None:
    """The slot is as it opened: open, held by no one, version 1 (a refusal changed nothing)."""
    slot = (await _graphql(client, token, SLOT, {"id": slot_id}))["slot"]
    assert slot == {"status": "OPEN", "holder": None, "version": 1}


async def _review(client: httpx.AsyncClient, people: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """An expense run waiting for finance: its id and the finance_review slot (fiona's)."""
    started = await w.start_expense(client, people["app"], "EXP-2026-0042")
    return started["run"]["id"], await w.slot_named(client, people["fiona"], "finance_review")


async def test_the_tools_are_listed_with_the_protocol_annotations(
    services: container.Services, people: dict[str, str]
) -> None:
    async with mcp_client.connect(services, people["fiona"]) as agent:
        listed = {t.name: t for t in (await agent.list_tools()).tools}
    assert set(listed) == READ_TOOLS | set(WRITE_TOOLS)
    for name in READ_TOOLS:
        hints = listed[name].annotations
        assert hints is not None, name
        assert hints.read_only_hint is True, name
    for name, (destructive, idempotent) in WRITE_TOOLS.items():
        hints = listed[name].annotations
        assert hints is not None, name
        assert hints.read_only_hint is False, name
        assert (hints.destructive_hint, hints.idempotent_hint) == (destructive, idempotent), name
        schema = listed[name].input_schema
        assert {"reason", "expectedVersion"} <= set(schema["required"]), name


async def test_each_read_tool_answers_what_graphql_answers_the_same_principal(
    client: httpx.AsyncClient, services: container.Services, people: dict[str, str]
) -> None:
    run_id, _ = await _review(client, people)
    asked = [
        ("fiona", "inbox", {}, documents.INBOX, {"payloads": False}),
        (
            "leah",
            "work",
            {"workflow": "expense-approval"},
            documents.WORK,
            {"filter": {"workflow": "expense-approval", "audience": None, "atRisk": False}},
        ),
        (
            "leah",
            "board",
            {"workflow": "expense-approval"},
            documents.BOARD,
            {"workflow": "expense-approval"},
        ),
        ("ada", "needsAttention", {}, documents.NEEDS_ATTENTION, {}),
        (
            "leah",
            "slaReport",
            {"since": "2026-11-01T00:00:00Z"},
            documents.SLA_REPORT,
            {"from": "2026-11-01T00:00:00Z"},
        ),
    ]
    for who, tool, arguments, document, variables in asked:
        wanted = await _graphql(
            client, people[who], document, {"first": 25, "payloads": False, **variables}
        )
        async with mcp_client.connect(services, people[who]) as agent:
            got = mcp_client.answer(await agent.call_tool(tool, arguments))
        assert got == wanted[tool], tool
    wanted = await _graphql(
        client, people["fiona"], documents.RUN, {"id": run_id, "payloads": False}
    )
    async with mcp_client.connect(services, people["fiona"]) as agent:
        got = mcp_client.answer(await agent.call_tool("run", {"runId": run_id}))
    extra = {"agentWrites", "availableActions"}
    assert {k: v for k, v in got.items() if k not in extra} == wanted["run"]
    assert [a["tool"] for a in got["availableActions"]] == ["claim", "complete"]
    assert got["agentWrites"] is False


async def test_a_principal_without_the_workflows_grant_sees_none_of_its_slots(
    client: httpx.AsyncClient, services: container.Services, people: dict[str, str]
) -> None:
    run_id, review = await _review(client, people)
    # Olga leads vendor onboarding only: nothing of the expense is hers to see.
    async with mcp_client.connect(services, people["olga"]) as agent:
        inbox = mcp_client.answer(await agent.call_tool("inbox", {}))
        run = mcp_client.refusal(await agent.call_tool("run", {"runId": run_id}))
        work = mcp_client.answer(await agent.call_tool("work", {"workflow": "expense-approval"}))
        claim = mcp_client.refusal(await _on_slot(agent, "claim", review["id"], 1, "try"))
    assert inbox["edges"] == []
    assert run["code"] == "NOT_FOUND"
    assert work["edges"] == []
    assert claim["code"] == "NOT_FOUND"
    assert review["id"] not in str(inbox)


async def test_payloads_and_addresses_are_shown_only_when_asked_and_allowed(
    client: httpx.AsyncClient, services: container.Services, people: dict[str, str]
) -> None:
    await w.start_expense(client, people["app"], "EXP-7", submitted_by="sam@example.com")
    async with mcp_client.connect(services, people["fiona"]) as agent:
        plain = mcp_client.answer(await agent.call_tool("inbox", {}))
        full = mcp_client.answer(await agent.call_tool("inbox", {"includePayloads": True}))
    (row,) = [e["node"] for e in plain["edges"]]
    assert "attributes" not in row["subject"]
    (row,) = [e["node"] for e in full["edges"]]
    assert row["subject"]["attributes"]["submitted_by"] == "sam@example.com"


async def test_a_write_without_the_opt_in_is_refused_and_changes_nothing(
    client: httpx.AsyncClient, services: container.Services, people: dict[str, str]
) -> None:
    _, review = await _review(client, people)
    # An agent grant on another workflow is not one on this.
    await principals.set_agent(services, None, "fiona", ["vendor-onboarding"], allow=True)
    async with mcp_client.connect(services, people["fiona"]) as agent:
        refused = mcp_client.refusal(await _on_slot(agent, "claim", review["id"], 1, "mine"))
    assert refused["code"] == "FORBIDDEN"
    assert "taskflow principals agent fiona" in refused["message"]
    await _still_open(client, people["fiona"], review["id"])


async def test_a_stale_expected_version_is_refused_and_changes_nothing(
    client: httpx.AsyncClient, services: container.Services, people: dict[str, str]
) -> None:
    run_id, review = await _review(client, people)
    await principals.set_agent(services, None, "fiona", None, allow=True)
    async with mcp_client.connect(services, people["fiona"]) as agent:
        stale = mcp_client.refusal(await _on_slot(agent, "claim", review["id"], 0, "mine"))
        blank = mcp_client.refusal(await _on_slot(agent, "claim", review["id"], 1, "  "))
    assert stale["code"] == "STALE_VERSION"
    assert stale["currentVersion"] == 1
    assert blank["code"] == "INVALID_INPUT"
    await _still_open(client, people["fiona"], review["id"])
    lines = await w.timeline(client, people["fiona"], run_id, ["slot.claimed"])
    assert lines == []


async def test_a_claim_through_mcp_shows_the_client_on_the_runs_timeline(
    client: httpx.AsyncClient, services: container.Services, people: dict[str, str]
) -> None:
    run_id, review = await _review(client, people)
    await principals.set_agent(services, None, "fiona", ["expense-approval"], allow=True)
    async with mcp_client.connect(services, people["fiona"]) as agent:
        claimed = mcp_client.answer(
            await _on_slot(agent, "claim", review["id"], 1, "triaging the queue")
        )
        released = mcp_client.answer(await _on_slot(agent, "release", review["id"], 2, "not mine"))
    assert claimed["slot"]["holder"] == "fiona"
    assert released["slot"] == {
        "id": review["id"],
        "status": "OPEN",
        "holder": None,
        "version": 3,
    }
    lines = await w.timeline(client, people["fiona"], run_id, ["slot.claimed", "slot.released"])
    assert [(x["kind"], x["actor"], x["reason"], x["details"]["via"]) for x in lines] == [
        ("slot.claimed", "fiona", "triaging the queue", "mcp:test-agent"),
        ("slot.released", "fiona", "not mine", "mcp:test-agent"),
    ]


async def test_the_endpoint_refuses_a_request_without_a_valid_token(
    client: httpx.AsyncClient,
) -> None:
    for headers in ({}, {"Authorization": "Bearer forged"}):
        answer = await client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={**headers, "Accept": "application/json, text/event-stream"},
        )
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"].startswith("Bearer")


async def test_a_run_tool_checks_the_runs_version_and_records_the_agent(
    client: httpx.AsyncClient, services: container.Services, people: dict[str, str]
) -> None:
    run_id, _ = await _review(client, people)
    await principals.set_agent(services, None, "leah", None, allow=True)
    async with mcp_client.connect(services, people["leah"]) as agent:
        seen = mcp_client.answer(await agent.call_tool("run", {"runId": run_id}))
        tools = [a["tool"] for a in seen["availableActions"]]
        version = seen["version"]
        asked = {"runId": run_id, "reason": "waiting for the customer"}
        stale = mcp_client.refusal(
            await agent.call_tool("pauseClocks", {**asked, "expectedVersion": version - 1})
        )
        paused = mcp_client.answer(
            await agent.call_tool("pauseClocks", {**asked, "expectedVersion": version})
        )
    assert seen["agentWrites"] is True
    assert {"pauseClocks", "resumeClocks"} <= set(tools)
    assert (stale["code"], stale["currentVersion"]) == ("STALE_VERSION", version)
    assert paused["run"]["id"] == run_id
    lines = await w.timeline(client, people["leah"], run_id)
    mine = [(x["kind"], x["actor"]) for x in lines if x["details"].get("via") == "mcp:test-agent"]
    # The refusal is on the timeline, as any refused act's (it changed nothing else).
    assert mine[:2] == [("refused", "leah"), ("clocks.paused", "leah")]
    assert [x["reason"] for x in lines if x["kind"] == "clocks.paused"] == [asked["reason"]]
