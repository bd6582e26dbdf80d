"""The query API for frontends: ``workflows`` (the definitions) and ``runs`` (find runs).

Before it, a frontend could not list workflows, states or lanes, nor find a run by
subject, state or key: ``workflows`` and ``runs`` did not exist in the schema.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.cli import main
from taskflow.config import config
from tests.api import workflows as w
from tests.conftest import gql
from tests.example_names import EXAMPLE_WORKFLOWS

pytestmark = pytest.mark.anyio

EXAMPLES = str(config.PROJECT_ROOT / "examples")

OPERATIONS = config.PROJECT_ROOT / "graphql" / "operations"
WORKFLOWS = (OPERATIONS / "workflows.graphql").read_text()
RUNS = (OPERATIONS / "runs_page.graphql").read_text()

CANCEL = """mutation($input: CancelRunInput!) { cancelRun(input: $input) { __typename } }"""


def _shown(name: str, capsys: pytest.CaptureFixture[str]) -> Any:
    assert main(["show", name, "--path", EXAMPLES]) == 0
    return json.loads(capsys.readouterr().out)


async def test_workflows_serve_the_documents_taskflow_show_prints(
    client: httpx.AsyncClient, people: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    result = (await gql(client, WORKFLOWS, token=people["sid"])).ok()["workflows"]
    names = [wf["name"] for wf in result]
    assert names == list(EXAMPLE_WORKFLOWS)
    for wf in result:
        assert wf["latest"]["document"] == _shown(wf["name"], capsys)
        assert wf["latest"]["digest"] == wf["latest"]["document"]["digest"]
        assert [v["version"] for v in wf["versions"]] == [wf["latest"]["version"]]

    expense = next(wf for wf in result if wf["name"] == "expense-approval")["latest"]
    assert expense["tracks"] == "expense"
    states = {s["name"]: s for s in expense["states"]}
    assert expense["lanes"] == [s["name"] for s in expense["states"]]
    assert states[expense["initialState"]]["kind"] == "INITIAL"
    assert [s["lane"] for s in expense["states"]] == list(range(len(expense["states"])))
    assert any(s["kind"] == "TERMINAL" for s in expense["states"])
    slots = [slot for s in expense["states"] for slot in s["slots"]]
    assert slots
    assert all(slot["candidates"] for slot in slots)
    # A candidate rule reads as words, not as the document's JSON tree.
    assert all(not slot["candidates"].startswith("{") for slot in slots)
    assert any(slot["milestones"] for slot in slots)

    one = (await gql(client, WORKFLOWS, {"name": "support-ticket"}, token=people["sid"])).ok()
    assert [wf["name"] for wf in one["workflows"]] == ["support-ticket"]
    anonymous = await gql(client, WORKFLOWS)
    assert anonymous.error_codes == ["UNAUTHENTICATED"]


async def _runs(client: httpx.AsyncClient, token: str, **variables: Any) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(client, RUNS, variables, token=token)).ok()["runs"]
    return found


def _ids(page: dict[str, Any]) -> list[str]:
    return [e["node"]["id"] for e in page["edges"]]


async def test_runs_filter_page_and_keep_to_the_callers_reach(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    app = people["app"]
    first = await w.start(client, app, "expense-approval", "expense", "E-1", w.EXPENSE)
    frozen_clock.advance(timedelta(hours=1))
    second_subject = {**w.EXPENSE, "reference": "EXP-2026-0043"}
    second = await w.start(client, app, "expense-approval", "expense", "E-2", second_subject)
    frozen_clock.advance(timedelta(hours=1))
    ticket = await w.start(client, app, "support-ticket", "ticket", "T-1", w.TICKET)
    e1, e2, t1 = first["run"]["id"], second["run"]["id"], ticket["run"]["id"]

    everything = await _runs(client, app)
    assert _ids(everything) == [t1, e2, e1]  # newest first
    assert everything["totalCount"] == 3

    expenses = {"workflow": "expense-approval"}
    assert _ids(await _runs(client, app, filter=expenses)) == [e2, e1]
    by_version = {"workflow": "expense-approval", "version": 1}
    assert _ids(await _runs(client, app, filter=by_version)) == [e2, e1]
    by_subject = {"subject": {"type": "expense", "externalId": "E-1"}}
    assert _ids(await _runs(client, app, filter=by_subject)) == [e1]
    by_key = {"correlationKey": "EXP-2026-0043"}
    assert _ids(await _runs(client, app, filter=by_key)) == [e2]
    state = first["run"]["state"]
    by_state = {"workflow": "expense-approval", "state": state}
    assert set(_ids(await _runs(client, app, filter=by_state))) == {e1, e2}
    started = {"started": {"from": everything["edges"][1]["node"]["startedAt"]}}
    assert _ids(await _runs(client, app, filter=started)) == [t1, e2]

    # Paging: keyset cursors, the total on every page.
    page = await _runs(client, app, first=2)
    assert _ids(page) == [t1, e2]
    assert page["pageInfo"]["hasNextPage"]
    rest = await _runs(client, app, first=2, after=page["pageInfo"]["endCursor"])
    assert _ids(rest) == [e1]
    assert not rest["pageInfo"]["hasNextPage"]
    assert rest["totalCount"] == 3

    # Ended runs: by status and by the end window.
    frozen_clock.advance(timedelta(hours=1))
    cancel = {"input": {"runId": e1, "reason": "duplicate claim"}}
    assert (await gql(client, CANCEL, cancel, token=app)).ok()["cancelRun"]["__typename"] == (
        "RunSuccess"
    )
    cancelled = await _runs(client, app, filter={"status": ["CANCELLED"]})
    assert _ids(cancelled) == [e1]
    ended_at = cancelled["edges"][0]["node"]["endedAt"]
    assert _ids(await _runs(client, app, filter={"ended": {"from": ended_at}})) == [e1]
    assert _ids(await _runs(client, app, filter={"ended": {"before": ended_at}})) == []
    active = await _runs(client, app, filter={"status": ["ACTIVE"]})
    assert _ids(active) == [t1, e2]

    # A lead of expense-approval never sees a support ticket, however she filters.
    leah = people["leah"]
    assert _ids(await _runs(client, leah)) == [e2, e1]
    tickets = await _runs(client, leah, filter={"workflow": "support-ticket"})
    assert tickets["totalCount"] == 0
    assert tickets["edges"] == []
    by_ticket = await _runs(client, leah, filter={"subject": {"externalId": "T-1"}})
    assert by_ticket["totalCount"] == 0
    # A team lead of support sees no ticket before a slot of her teams opens on it.
    assert (await _runs(client, people["tara"]))["totalCount"] == 0
    # Someone with no grant and no slot sees nothing; a candidate sees the runs of their slots.
    assert (await _runs(client, people["sid"]))["totalCount"] == 0
    inbox = await w.inbox(client, people["tess"])
    assert inbox, "the triage slot of the ticket is tess's to take"
    assert _ids(await _runs(client, people["tess"])) == [t1]
    nested = """{ runs { edges { node { id slots { name status } } } } }"""
    [edge] = (await gql(client, nested, token=people["tess"])).ok()["runs"]["edges"]
    assert [s["name"] for s in edge["node"]["slots"]] == [inbox[0]["name"]]
    # Admins see every run.
    assert (await _runs(client, people["ada"]))["totalCount"] == 3


async def test_runs_refuse_what_they_cannot_answer(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    app = people["app"]
    unknown = await gql(client, RUNS, {"filter": {"workflow": "payroll"}}, token=app)
    assert unknown.error_codes == ["NOT_FOUND"]
    version_alone = await gql(client, RUNS, {"filter": {"version": 1}}, token=app)
    assert version_alone.error_codes == ["INVALID_INPUT"]
    bad_cursor = await gql(client, RUNS, {"after": "nonsense"}, token=app)
    assert bad_cursor.error_codes == ["INVALID_INPUT"]
    too_many = await gql(client, RUNS, {"first": 1000}, token=app)
    assert too_many.error_codes == ["INVALID_INPUT"]
    assert (await gql(client, RUNS)).error_codes == ["UNAUTHENTICATED"]
