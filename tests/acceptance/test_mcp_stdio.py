"""``taskflow mcp`` as a real process, started and spoken to by the MCP SDK's stdio client.

The process acts as TASKFLOW_TOKEN's principal on the test's database: its inbox tool answers
what GraphQL answers that principal, a claim it makes (with the principal's agent opt-in)
shows ``mcp:<client>`` on the run's timeline, and a process started without a token says
what to do and exits.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import mcp_types
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from taskflow.api.mcp import documents
from taskflow.config import config
from taskflow.service.access import principals
from taskflow.service.common import container
from tests.acceptance.conftest import TASKFLOW, worker_env
from tests.api import mcp_client
from tests.api import workflows as w
from tests.conftest import TEST_SECRET, gql

pytestmark = pytest.mark.anyio

CLIENT = "stdio-agent"


def _params(database_url: str, root: Path, token: str) -> StdioServerParameters:
    env = worker_env(database_url, root, TASKFLOW_SECRET_KEYS=TEST_SECRET, TASKFLOW_TOKEN=token)
    return StdioServerParameters(
        command=sys.executable, args=["-m", "taskflow", "mcp"], env=env, cwd=config.PROJECT_ROOT
    )


async def test_taskflow_mcp_serves_the_tools_over_stdio_as_its_tokens_principal(
    client: httpx.AsyncClient,
    services: container.Services,
    people: dict[str, str],
    database_url: str,
    tmp_path: Path,
) -> None:
    started = await w.start_expense(client, people["app"], "EXP-2026-0042")
    run_id = started["run"]["id"]
    await principals.set_agent(services, None, "fiona", ["expense-approval"], allow=True)
    wanted = (
        await gql(client, documents.INBOX, {"first": 25, "payloads": False}, token=people["fiona"])
    ).ok()["inbox"]
    agent = Client(
        _params(database_url, tmp_path, people["fiona"]),
        client_info=mcp_types.Implementation(name=CLIENT, version="1"),
    )
    async with agent:
        names = {t.name for t in (await agent.list_tools()).tools}
        inbox = mcp_client.answer(await agent.call_tool("inbox", {}))
        (review,) = [e["node"] for e in inbox["edges"]]
        claimed = mcp_client.answer(
            await agent.call_tool(
                "claim",
                {"slotId": review["id"], "expectedVersion": 1, "reason": "picked by the agent"},
            )
        )
    assert {"inbox", "run", "claim", "complete"} <= names
    assert inbox == wanted
    assert claimed["slot"]["holder"] == "fiona"
    (line,) = await w.timeline(client, people["fiona"], run_id, ["slot.claimed"])
    assert (line["actor"], line["reason"], line["details"]["via"]) == (
        "fiona",
        "picked by the agent",
        f"mcp:{CLIENT}",
    )


def _command(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``taskflow ARGS`` run to its end in ``env``, its output kept."""
    return subprocess.run(
        [*TASKFLOW, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=config.PROJECT_ROOT,
        check=False,
    )


def test_taskflow_mcp_without_a_token_says_what_to_do(tmp_path: Path) -> None:
    env = worker_env("postgresql://unused/", tmp_path)
    env.pop("TASKFLOW_TOKEN", None)
    done = _command(env, "mcp")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "TASKFLOW_TOKEN" in done.stderr


async def test_an_admin_turns_a_principals_agent_tools_on_and_off_from_the_command_line(
    services: container.Services, people: dict[str, str], database_url: str, tmp_path: Path
) -> None:
    env = worker_env(database_url, tmp_path, TASKFLOW_SECRET_KEYS=TEST_SECRET)

    def agent(*args: str) -> subprocess.CompletedProcess[str]:
        return _command(env, "principals", "agent", *args)

    on = agent("leah", "--workflow", "expense-approval")
    after_on = await principals.get(services, "leah")
    off = agent("leah", "--off")
    after_off = await principals.get(services, "leah")
    unknown = agent("nobody")
    assert on.returncode == 0, on.stderr
    assert "agent of expense-approval" in on.stdout
    assert after_on is not None
    assert [g.as_dict() for g in after_on.powers] == [
        {"power": "lead", "workflows": ["expense-approval"]},
        {"power": "agent", "workflows": ["expense-approval"]},
    ]
    assert off.returncode == 0, off.stderr
    assert after_off is not None
    assert [g.power for g in after_off.powers] == ["lead"]
    assert unknown.returncode == 1
    assert "No principal has the id 'nobody'" in unknown.stderr
