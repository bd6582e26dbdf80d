"""Run deadlines through GraphQL over HTTP, fired by the worker's own batch (``run_due``):
a subject's due date (end of that business day), its at-risk and breach milestones with their
notices and the move on breach, the date moved by ``updateSubject``, a date already past at
start, a date that does not parse, a duration that cancels, a raised event, and a run
completing in the same instant its deadline fires.

The frozen clock starts on Tuesday 1 December 2026, 09:00 UTC (London is on UTC in winter).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.api import workflows as w
from tests.api.reminders import at, fire, notifications
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

deadlined, api, tokens = app_with("deadlined", Path(__file__).parent / "deadline_workflows.py")

RUN = """query($id: ID!) { run(id: $id) { state status
  slots { id name status }
  deadline { dueAt source rule status breachedAt milestones { kind at firedAt } }
  timeline(first: 100) { edges { node { kind details } } } } }"""

UPDATE = """mutation($input: UpdateSubjectInput!) { updateSubject(input: $input) { __typename
  ... on Refusal { code message } ... on InvalidInput { field } } }"""

BOARD = """query { board(workflow: "order", includeEnded: true) { edges { node {
  subject { externalId } lane deadline { status dueAt } } } } }"""

REPORT = """query($from: DateTime!) { slaReport(from: $from, to: "2026-12-02T00:00:00Z") {
  runDeadlines { workflow runs met missed open } } }"""

START = """mutation($input: StartRunInput!) { startRun(input: $input) { __typename
  ... on StartRunSuccess { run { id } } ... on Refusal { code message }
  ... on InvalidInput { field } } }"""


async def run_of(api: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    return dict((await gql(api, RUN, {"id": run_id}, token=token)).ok()["run"])


def lines(run: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["node"]["details"] for e in run["timeline"]["edges"] if e["node"]["kind"] == kind]


async def start(
    api: httpx.AsyncClient, token: str, workflow: str, ref: str, **attributes: Any
) -> dict[str, Any]:
    subject = {"type": workflow.split("-")[0], "externalId": ref, "attributes": attributes}
    variables = {"input": {"workflow": workflow, "subject": subject}}
    return dict((await gql(api, START, variables, token=token)).ok()["startRun"])


async def test_a_due_date_warns_moves_with_the_subject_and_breaches_into_its_state(
    api: httpx.AsyncClient, tokens: dict[str, str], deadlined: container.Services
) -> None:
    started = await start(api, tokens["app"], "contract-review", "C-1", due_date="2026-12-03")
    run_id = started["run"]["id"]
    run = await run_of(api, tokens["ada"], run_id)
    # A bare date on a calendar: the end of that business day (uk-london closes at 17:30).
    assert run["deadline"] == {
        "dueAt": at(3, 17, 30).isoformat(),
        "source": "SUBJECT",
        "rule": "at subject.due_date (end of the business day on uk-london)",
        "status": "ON_TIME",
        "breachedAt": None,
        "milestones": [
            # 75 % of the 56 h 30 from the start: 42 h 22 m 30 s later.
            {"kind": "AT_RISK", "at": "2026-12-03T03:22:30+00:00", "firedAt": None},
            {"kind": "BREACHED", "at": at(3, 17, 30).isoformat(), "firedAt": None},
        ],
    }

    assert await fire(deadlined, at(3, 4)) == 1
    run = await run_of(api, tokens["ada"], run_id)
    assert run["deadline"]["status"] == "AT_RISK"
    assert run["deadline"]["milestones"][0]["firedAt"] == "2026-12-03T03:22:30+00:00"
    [risk] = lines(run, "run.deadline_at_risk")
    assert risk["due_at"] == at(3, 17, 30).isoformat()
    told = await notifications(api, tokens["fiona"])
    assert any("deadline" in n["message"] and "at risk" in n["message"] for n in told)

    # The customer's contract moves the date: the deadline follows, old and new on the line.
    variables = {
        "input": {"type": "contract", "externalId": "C-1", "attributes": {"due_date": "2026-12-04"}}
    }
    moved = await gql(api, UPDATE, variables, token=tokens["app"])
    assert moved.ok()["updateSubject"]["__typename"] == "UpdateSubjectSuccess"
    run = await run_of(api, tokens["ada"], run_id)
    assert lines(run, "run.deadline_moved") == [
        {
            "old_due_at": at(3, 17, 30).isoformat(),
            "new_due_at": at(4, 17, 30).isoformat(),
            "source": "subject",
        }
    ]
    assert run["deadline"]["dueAt"] == at(4, 17, 30).isoformat()
    assert await fire(deadlined, at(3, 17, 30)) == 0  # the old instant: nothing is due

    # Breached: the line, the lead told, the run moved to overdue (its slot opened there).
    assert await fire(deadlined, at(4, 17, 30)) == 1
    run = await run_of(api, tokens["ada"], run_id)
    assert run["state"] == "overdue"
    assert [s["name"] for s in run["slots"]] == ["chase"]
    assert run["deadline"]["status"] == "BREACHED"
    assert run["deadline"]["breachedAt"] == at(4, 17, 30).isoformat()
    assert len(lines(run, "run.deadline_breached")) == 1
    assert any("passed" in n["message"] for n in await notifications(api, tokens["leah"]))
    assert await fire(deadlined, at(9, 9)) == 0  # each milestone fired once


async def test_a_date_already_past_at_start_is_applied_at_once(
    api: httpx.AsyncClient, tokens: dict[str, str], deadlined: container.Services
) -> None:
    started = await start(api, tokens["app"], "contract-review", "C-2", due_date="2026-11-20")
    run_id = started["run"]["id"]
    run = await run_of(api, tokens["ada"], run_id)
    assert run["deadline"]["status"] == "BREACHED"
    assert run["deadline"]["milestones"][0]["at"] is None  # no at-risk instant before it
    assert await fire(deadlined, at(1, 9)) == 1  # the next worker pass
    run = await run_of(api, tokens["ada"], run_id)
    assert run["state"] == "overdue"
    [line] = lines(run, "run.deadline_breached")
    assert line["due_at"] == at(20, 17, 30).isoformat().replace("12-20", "11-20")


@pytest.mark.parametrize("bad", ["next friday", "2026-13-01", 20261203])
async def test_a_date_that_does_not_parse_is_refused_at_start_and_at_update(
    api: httpx.AsyncClient, tokens: dict[str, str], deadlined: container.Services, bad: Any
) -> None:
    refused = await start(api, tokens["app"], "contract-review", "C-3", due_date=bad)
    assert refused["__typename"] == "InvalidInput", refused
    assert refused["field"] == "subject.due_date"
    assert "subject.due_date" in refused["message"]
    started = await start(api, tokens["app"], "contract-review", "C-3", due_date="2026-12-03")
    assert started["__typename"] == "StartRunSuccess"  # nothing was written by the refusal
    variables = {
        "input": {"type": "contract", "externalId": "C-3", "attributes": {"due_date": bad}}
    }
    answer = (await gql(api, UPDATE, variables, token=tokens["app"])).ok()["updateSubject"]
    assert answer["__typename"] == "InvalidInput", answer
    assert answer["field"] == "subject.due_date"
    run = await run_of(api, tokens["ada"], started["run"]["id"])
    assert run["deadline"]["dueAt"] == at(3, 17, 30).isoformat()


async def test_a_duration_deadline_cancels_the_run_and_a_run_done_in_time_is_on_time(
    api: httpx.AsyncClient, tokens: dict[str, str], deadlined: container.Services
) -> None:
    late = (await start(api, tokens["app"], "order", "O-1"))["run"]["id"]
    early = (await start(api, tokens["app"], "order", "O-2"))["run"]["id"]
    run = await run_of(api, tokens["ada"], late)
    assert run["deadline"]["source"] == "DURATION"
    assert run["deadline"]["rule"] == "4 real hours after the start"
    assert run["deadline"]["dueAt"] == at(1, 13).isoformat()
    [pack] = (await run_of(api, tokens["ada"], early))["slots"]
    done = await w.complete(api, tokens["fiona"], pack["id"], {})
    assert done["__typename"] == "CompleteSuccess", done

    assert await fire(deadlined, at(1, 13)) == 2  # O-1's at-risk (12:00) and breach; O-2 none
    run = await run_of(api, tokens["ada"], late)
    assert (run["status"], run["deadline"]["status"]) == ("CANCELLED", "BREACHED")
    run = await run_of(api, tokens["ada"], early)
    assert (run["status"], run["deadline"]["status"]) == ("COMPLETED", "ON_TIME")
    assert lines(run, "run.deadline_breached") == []
    # The board's cards show it too.
    board = (await gql(api, BOARD, token=tokens["ada"])).ok()["board"]["edges"]
    cards = {e["node"]["subject"]["externalId"]: e["node"] for e in board}
    assert cards["O-1"]["deadline"] == {"status": "BREACHED", "dueAt": at(1, 13).isoformat()}
    assert cards["O-2"]["deadline"]["status"] == "ON_TIME"
    # The SLA report counts runs meeting and missing their deadline (a third still open).
    await start(api, tokens["app"], "order", "O-3")
    report = await gql(api, REPORT, {"from": at(1, 0).isoformat()}, token=tokens["ada"])
    assert report.ok()["slaReport"]["runDeadlines"] == [
        {"workflow": "order", "runs": 3, "met": 1, "missed": 1, "open": 1}
    ]
    forbidden = await gql(api, REPORT, {"from": at(1, 0).isoformat()}, token=tokens["fiona"])
    assert forbidden.error_codes == ["FORBIDDEN"]


async def test_a_missed_berlin_time_raises_the_declared_event(
    api: httpx.AsyncClient, tokens: dict[str, str], deadlined: container.Services
) -> None:
    # No offset: read in Europe/Berlin (UTC+1 in winter).
    started = await start(api, tokens["app"], "claim", "K-1", decide_by="2026-12-02T12:00:00")
    run_id = started["run"]["id"]
    assert (await run_of(api, tokens["ada"], run_id))["deadline"]["dueAt"] == at(2, 11).isoformat()
    assert await fire(deadlined, at(2, 11)) == 2
    run = await run_of(api, tokens["ada"], run_id)
    assert (run["state"], run["status"]) == ("late", "COMPLETED")
    assert run["deadline"]["status"] == "BREACHED"


async def test_a_run_completing_as_its_deadline_fires_settles_to_one_outcome(
    api: httpx.AsyncClient, tokens: dict[str, str], deadlined: container.Services
) -> None:
    for round_ in range(4):
        deadlined.clock.set(at(1, 9))  # type: ignore[attr-defined]
        run_id = (await start(api, tokens["app"], "order", f"R-{round_}"))["run"]["id"]
        [pack] = (await run_of(api, tokens["ada"], run_id))["slots"]
        assert await fire(deadlined, at(1, 12)) == 1  # the at-risk notice, out of the way
        deadlined.clock.set(at(1, 13))  # type: ignore[attr-defined]
        done, fired = await asyncio.gather(
            w.complete(api, tokens["fiona"], pack["id"], {}),
            timers.run_due(deadlined, at(1, 13)),
        )
        run = await run_of(api, tokens["ada"], run_id)
        breaches = lines(run, "run.deadline_breached")
        if done["__typename"] == "CompleteSuccess":  # the completion committed first
            assert (fired, breaches, run["status"]) == (0, [], "COMPLETED")
            assert run["deadline"]["status"] == "ON_TIME"
        else:  # the breach committed first: the run was cancelled, the completion refused
            assert (fired, len(breaches), run["status"]) == (1, 1, "CANCELLED")
            assert run["deadline"]["status"] == "BREACHED"


TICKET_BOARD = """query { board(workflow: "support-ticket", first: 100) { edges { node {
  subject { externalId } deadline { status dueAt } } } } }"""


async def test_the_demo_shows_tickets_that_missed_their_deadline(
    api: httpx.AsyncClient, tokens: dict[str, str], deadlined: container.Services
) -> None:
    from taskflow.cli.demo_cmd import PRINCIPALS, RUNS
    from taskflow.service.operate import demo

    records, data = demo.read(PRINCIPALS, RUNS)
    await demo.seed(deadlined, records, data)
    assert await fire(deadlined, at(1, 9)) > 0  # the breaches of earlier days, at once
    board = (await gql(api, TICKET_BOARD, token=tokens["ada"])).ok()["board"]["edges"]
    backlog = {
        e["node"]["subject"]["externalId"]: e["node"]["deadline"]
        for e in board
        if e["node"]["subject"]["externalId"].startswith("T-8")
        and e["node"]["deadline"] is not None
    }
    assert "BREACHED" in {d["status"] for d in backlog.values()}, backlog
    report = await gql(
        api,
        REPORT.replace("2026-12-02", "2026-12-31"),
        {"from": at(1, 0).replace(month=11).isoformat()},
        token=tokens["ada"],
    )
    [tickets] = [
        r for r in report.ok()["slaReport"]["runDeadlines"] if r["workflow"] == "support-ticket"
    ]
    assert tickets["missed"] >= 1


DRY_RUN = """query($subject: JSON!, $events: [DryRunEventInput!]!) {
  slaDryRun(workflow: "contract-review", subject: $subject, events: $events) { __typename
    ... on SlaDryRun { state timeline { at kind } } } }"""


async def test_a_dry_run_plays_the_run_deadline_as_the_worker_would(
    api: httpx.AsyncClient, tokens: dict[str, str], deadlined: container.Services
) -> None:
    events = [
        {"at": at(1, 9).isoformat(), "kind": "start"},
        {"at": at(2, 14).isoformat(), "kind": "subject", "attributes": {"due_date": "2026-12-04"}},
        {"at": at(7, 9).isoformat(), "kind": "end"},
    ]
    variables = {"subject": {"due_date": "2026-12-03"}, "events": events}
    answer = (await gql(api, DRY_RUN, variables, token=tokens["fiona"])).ok()["slaDryRun"]
    assert answer["state"] == "overdue"
    deadline_lines = [(x["kind"], x["at"]) for x in answer["timeline"] if "deadline" in x["kind"]]
    assert deadline_lines == [
        ("run.deadline_moved", at(2, 14).isoformat()),
        ("run.deadline_at_risk", "2026-12-03T21:22:30+00:00"),
        ("run.deadline_breached", at(4, 17, 30).isoformat()),
    ]
