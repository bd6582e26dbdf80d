"""The access model over HTTP: scoped leads, scoped integrations, nested objects, links.

Each test is a way around the model that worked before powers were scoped
(leads and integrations were global, ``Slot.run`` was loaded unchecked, a
candidate of a pending slot read the run's links); each must stay refused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow.api import app as api_app
from taskflow.api.console import cards as console_cards
from taskflow.api.console import pages as console_pages
from taskflow.api.console import runs as console_runs
from taskflow.api.graphql.common import relay
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests import conftest
from tests import reports_dataset as ds
from tests.api import live
from tests.api import magic as m
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.test_console_pages import SAME
from tests.api.test_inbox_queries import Counter
from tests.conftest import gql

pytestmark = pytest.mark.anyio

RUN = """query($id: ID!) { run(id: $id) { id workflow state slots { id name status } } }"""
NODE = """query($id: ID!) { node(id: $id) { id } }"""
WORK = """query($filter: WorkFilter) { work(first: 100, filter: $filter) { totalCount
  edges { node { id name workflow run { id } } } } }"""
BOARD = """query($workflow: String!) { board(workflow: $workflow) { totalCount
  edges { node { run { id } } } } }"""
CANCEL = """mutation($input: CancelRunInput!) { cancelRun(input: $input) { __typename
  ... on RunSuccess { run { status } } ... on Refusal { code message } } }"""
MOVE = """mutation($input: MoveInput!) { move(input: $input) { __typename
  ... on Refusal { code message } } }"""
ADD_CANDIDATE = """mutation($input: AddCandidateInput!) { addCandidate(input: $input) {
  __typename } }"""
UNDO = """mutation($input: UndoInput!) { undo(input: $input) { __typename } }"""
RAISE = """mutation($input: RaiseEventInput!) { raiseEvent(input: $input) { __typename
  ... on RaiseEventSuccess { run { state } } ... on Refusal { code message } } }"""
NOTIFICATIONS = """query($filter: NotificationFilter) {
  notifications(first: 100, filter: $filter) { edges { node { id runId } } } }"""
REPORT = """query($filter: SlaReportFilter) {
  slaReport(from: "2026-11-16T00:00:00Z", groupBy: [WORKFLOW], filter: $filter) {
  rows { workflow opened } } }"""
LINKS = """query($id: ID!) { node(id: $id) { ... on Slot { links { id recipientEmail } } } }"""
SUB_RUN = "subscription($id: ID!) { runChanged(id: $id) { cursor runId run { id } } }"
SUB_SLOT = "subscription($id: ID!) { slotChanged(id: $id) { cursor slotId } }"
SUB_WORK = "subscription($filter: WorkFilter!) { workChanged(filter: $filter) { slotId } }"
TIMELINE = """query($id: ID!) { run(id: $id) { timeline(first: 100, kinds: ["link.minted"]) {
  edges { node { kind reason details } } } } }"""


async def _run(client: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = (await gql(client, RUN, {"id": run_id}, token=token)).ok()["run"]
    return found


async def _expense_and_ticket(
    client: httpx.AsyncClient, people: dict[str, str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    expense = await w.start(client, people["app"], "expense-approval", "expense", "E-1", w.EXPENSE)
    ticket = await w.start(client, people["helpdesk"], "support-ticket", "ticket", "T-1", w.TICKET)
    assert expense["__typename"] == ticket["__typename"] == "StartRunSuccess"
    return expense["run"], ticket["run"]


async def test_a_lead_of_one_workflow_cannot_read_cancel_move_or_mint_on_another(
    world: World,
) -> None:
    client, people = world.client, world.people
    expense, ticket = await _expense_and_ticket(client, people)
    leah = people["leah"]  # lead of expense-approval only
    ticket_slots = (await _run(client, people["app"], ticket["id"]) or {})["slots"]

    assert await _run(client, leah, ticket["id"]) is None
    assert (await gql(client, NODE, {"id": ticket["id"]}, token=leah)).ok()["node"] is None
    assert (await gql(client, NODE, {"id": ticket_slots[0]["id"]}, token=leah)).ok()["node"] is None
    work = (await gql(client, WORK, {}, token=leah)).ok()["work"]
    assert {e["node"]["workflow"] for e in work["edges"]} == {"expense-approval"}
    assert work["totalCount"] == len(work["edges"])
    only_tickets = await gql(client, WORK, {"filter": {"workflow": "support-ticket"}}, token=leah)
    assert only_tickets.ok()["work"]["totalCount"] == 0
    board = await gql(client, BOARD, {"workflow": "support-ticket"}, token=leah)
    assert board.ok()["board"]["totalCount"] == 0

    cancel = {"input": {"runId": ticket["id"], "reason": "mine now"}}
    refused = (await gql(client, CANCEL, cancel, token=leah)).ok()["cancelRun"]
    assert refused["__typename"] == "NotFoundRefusal", refused
    move = {"input": {"runId": ticket["id"], "move": "reopen"}}
    assert (await gql(client, MOVE, move, token=leah)).ok()["move"]["__typename"] == (
        "NotFoundRefusal"
    )
    undo = {"input": {"runId": ticket["id"], "reason": "mine now"}}
    assert (await gql(client, UNDO, undo, token=leah)).ok()["undo"]["__typename"] == (
        "NotFoundRefusal"
    )
    minted = await m.mint(client, leah, ticket_slots[0]["id"], email="leah@example.org")
    assert minted["__typename"] == "NotFoundRefusal", minted
    widen = {"input": {"slotId": ticket_slots[0]["id"], "role": "finance", "reason": "help"}}
    widened = (await gql(client, ADD_CANDIDATE, widen, token=leah)).ok()["addCandidate"]
    assert widened["__typename"] == "NotFoundRefusal", widened
    assert (await _run(client, people["app"], ticket["id"]) or {})["state"] == ticket["state"]

    # Within her grant she reads, boards and cancels as a lead does.
    assert (await _run(client, leah, expense["id"]) or {})["workflow"] == "expense-approval"
    board = await gql(client, BOARD, {"workflow": "expense-approval"}, token=leah)
    assert board.ok()["board"]["totalCount"] == 1
    cancel = {"input": {"runId": expense["id"], "reason": "duplicate claim"}}
    done = (await gql(client, CANCEL, cancel, token=leah)).ok()["cancelRun"]
    assert done == {"__typename": "RunSuccess", "run": {"status": "CANCELLED"}}


async def test_a_scoped_lead_reports_only_on_the_workflows_granted(world: World) -> None:
    client, people, services = world.client, world.people, world.services
    async with services.db.transaction() as conn:
        await ds.load(conn)
    everyone = (await gql(client, REPORT, {}, token=people["max"])).ok()["slaReport"]["rows"]
    assert len({r["workflow"] for r in everyone}) > 1
    leah = (await gql(client, REPORT, {}, token=people["leah"])).ok()["slaReport"]["rows"]
    assert {r["workflow"] for r in leah} == {"expense-approval"}
    tara = (await gql(client, REPORT, {}, token=people["tara"])).ok()["slaReport"]["rows"]
    assert {r["workflow"] for r in tara} <= {"support-ticket"}  # her team's slots only
    risky = {"filter": {"atRisk": True}}
    for who, workflows in (("tara", {"support-ticket"}), ("leah", {"expense-approval"})):
        at_risk = (await gql(client, WORK, risky, token=people[who])).ok()["work"]["edges"]
        assert {e["node"]["workflow"] for e in at_risk} <= workflows
    other = {"filter": {"workflow": "vendor-onboarding"}}
    assert (await gql(client, REPORT, other, token=people["leah"])).error_codes == ["FORBIDDEN"]
    by_workflow = "/reports/sla?from=2026-11-16&group=workflow"
    full = await client.get(by_workflow, headers={"Authorization": f"Bearer {people['max']}"})
    assert full.status_code == 200
    assert "vendor-onboarding" in full.text
    page = await client.get(by_workflow, headers={"Authorization": f"Bearer {people['leah']}"})
    assert page.status_code == 200
    assert "expense-approval" in page.text
    assert "vendor-onboarding" not in page.text


async def test_the_mail_gateway_cannot_approve_an_expense_nor_read_it_or_its_outbox(
    world: World,
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    expense, _ = await _expense_and_ticket(client, people)
    gateway = people["helpdesk"]  # integration of support-ticket, event customer-replied
    approve = {
        "input": {
            "event": "reviewed",
            "payload": {"decision": "approve"},
            "target": {"correlationKey": w.EXPENSE["reference"]},
        }
    }
    refused = (await gql(client, RAISE, approve, token=gateway)).ok()["raiseEvent"]
    assert refused["__typename"] == "NoSlotWaiting", refused
    assert (await _run(client, people["app"], expense["id"]) or {})["state"] == "submitted"
    assert await _run(client, gateway, expense["id"]) is None
    # Nor an event of its own workflow that its grant does not name.
    triage = {
        "input": {
            "event": "triaged",
            "payload": {"priority": "P3", "category": "question"},
            "target": {"correlationKey": "T-1"},
        }
    }
    assert (await gql(client, RAISE, triage, token=gateway)).ok()["raiseEvent"][
        "__typename"
    ] == "NoSlotWaiting"
    started = await w.start(client, gateway, "expense-approval", "expense", "E-2", w.EXPENSE)
    assert started["__typename"] == "NotAllowed", started

    # Reminders fill the outbox; the expense's are the back-office application's to read.
    frozen_clock.advance(timedelta(days=5))
    assert await timers.run_due(services, frozen_clock.now()) > 0
    everyone = {"filter": {"recipients": "EVERYONE"}}
    seen = (await gql(client, NOTIFICATIONS, everyone, token=people["app"])).ok()
    expense_notes = [
        e["node"] for e in seen["notifications"]["edges"] if e["node"]["runId"] == expense["id"]
    ]
    assert expense_notes
    read = (await gql(client, NOTIFICATIONS, everyone, token=gateway)).ok()
    assert all(e["node"]["runId"] != expense["id"] for e in read["notifications"]["edges"])
    note = await gql(client, NODE, {"id": expense_notes[0]["id"]}, token=gateway)
    assert note.ok()["node"] is None


async def test_a_team_lead_reads_runs_through_their_teams_slots_and_slot_run_agrees(
    world: World,
) -> None:
    client, people = world.client, world.people
    _, ticket = await _expense_and_ticket(client, people)
    tara = people["tara"]  # lead of support-ticket for group:billing-support only
    # In triage the ticket has no slot of her team: not hers to read.
    assert await _run(client, tara, ticket["id"]) is None
    assert (await gql(client, WORK, {}, token=tara)).ok()["work"]["totalCount"] == 0
    triage = {
        "input": {
            "event": "triaged",
            "payload": {"priority": "P3", "category": "question"},
            "target": {"runId": ticket["id"]},
        }
    }
    assert (await gql(client, RAISE, triage, token=people["tess"])).ok()["raiseEvent"][
        "__typename"
    ] == "RaiseEventSuccess"
    assert (await _run(client, tara, ticket["id"]) or {})["id"] == ticket["id"]
    # A nested run answers as run(id:) does, for every slot of every page.
    for who in ("tara", "leah", "max"):
        edges = (await gql(client, WORK, {}, token=people[who])).ok()["work"]["edges"]
        assert edges, who
        for edge in edges:
            nested = edge["node"]["run"]
            assert nested is not None
            assert (await _run(client, people[who], nested["id"]) or {}).get("id") == nested["id"]


async def test_candidates_of_a_pending_slot_read_no_links_nor_their_recipients(
    world: World,
) -> None:
    client, people = world.client, world.people
    run = await m.start_vendor(client, people)
    upload = (await m.upload_slots(client, people, run["id"]))["bank details"]
    await m.minted(client, people, upload)
    lee = people["lee"]  # legal: a candidate of the legal review, pending until uploads end
    slots = (await _run(client, lee, run["id"]) or {})["slots"]
    assert {s["name"]: s["status"] for s in slots}["legal_review"] == "PENDING"
    links = (await gql(client, LINKS, {"id": upload}, token=lee)).ok()["node"]
    assert links is None or links["links"] == []
    lines = (await gql(client, TIMELINE, {"id": run["id"]}, token=lee)).ok()["run"]
    assert [e["node"] for e in lines["timeline"]["edges"]] == [
        {"kind": "link.minted", "reason": None, "details": {}}
    ]
    # Olga, the lead of vendor onboarding, still reads both.
    olga = (await gql(client, LINKS, {"id": upload}, token=people["olga"])).ok()["node"]
    assert [k["recipientEmail"] for k in olga["links"]] == ["onboarding@acme.example"]


@pytest.fixture
async def counted(services: container.Services) -> AsyncIterator[tuple[httpx.AsyncClient, Counter]]:
    counter = Counter()
    database = await conftest.reconnect(services.db, query_logger=counter)
    application = api_app.create_app(services=replace(services, db=database))
    async with httpx.AsyncClient(
        transport=ASGIWebSocketTransport(application), base_url="http://taskflow.test"
    ) as http:
        yield http, counter
    await database.close()


NESTED = """query { work(first: 50, filter: {workflow: "expense-approval"}) { edges { node {
  id run { id state slots { name } moves { name allowed } checklist { name }
  timeline(first: 5) { totalCount } } } } } }"""


async def test_a_work_page_with_nested_runs_checks_and_loads_each_run_once(
    world: World, counted: tuple[httpx.AsyncClient, Counter]
) -> None:
    client, people = world.client, world.people
    http, counter = counted
    for i in range(30):
        reference = f"EXP-{i:03d}"
        expense = {**w.EXPENSE, "reference": reference}
        await w.start(client, people["app"], "expense-approval", "expense", reference, expense)
    await gql(http, NESTED, token=people["leah"])  # warm the pool
    counter.statements.clear()
    page = (await gql(http, NESTED, token=people["leah"])).ok()["work"]["edges"]
    assert len(page) == 30
    assert all(e["node"]["run"]["state"] == "submitted" for e in page)
    # Authenticate, count and page, one batch of runs and one of their slots (the access
    # check and Run.slots, moves, checklist all read them); only each run's own timeline
    # page costs statements per run (its count and its lines).
    timeline = [q for q in counter.statements if "FROM audit_event" in q]
    rest = [q for q in counter.statements if "FROM audit_event" not in q]
    assert len(timeline) == 2 * 30
    assert sum("FROM run r" in q for q in rest) == 1, rest  # the batch of runs
    assert sum("FROM slot WHERE run = ANY" in q for q in rest) == 1, rest  # their slots
    assert sum("FROM slot" in q or "FROM run" in q for q in rest) == 4, rest  # + count, page


async def test_each_mutation_of_a_request_reads_runs_afresh(world: World) -> None:
    client, people = world.client, world.people
    expense, _ = await _expense_and_ticket(client, people)
    review = (await _run(client, people["app"], expense["id"]) or {})["slots"][0]["id"]
    both = """mutation($id: ID!) {
      a: claim(input: {slotId: $id}) { ... on SlotSuccess { slot { run { slots { holder } } } } }
      b: release(input: {slotId: $id}) { ... on SlotSuccess { slot { run { slots { holder } } } } }
    }"""
    done = (await gql(client, both, {"id": review}, token=people["fiona"])).ok()
    assert done["a"]["slot"]["run"]["slots"] == [{"holder": "fiona"}]
    assert done["b"]["slot"]["run"]["slots"] == [{"holder": None}]


GRANT = """mutation($input: UpsertPrincipalInput!) { upsertPrincipal(input: $input) {
  __typename ... on UpsertPrincipalSuccess { principal { login powers {
    power workflows teams events } } }
  ... on InvalidInput { code message field } ... on Refusal { code message } } }"""


async def test_admins_grant_scoped_powers_and_a_typo_grants_nothing(world: World) -> None:
    client, people, services = world.client, world.people, world.services
    nina = {
        "login": "nina",
        "displayName": "Nina",
        "roles": ["lead"],
        "powers": [{"power": "LEAD", "workflows": ["support-ticket"], "teams": ["group:emea"]}],
    }
    done = (await gql(client, GRANT, {"input": nina}, token=people["ada"])).ok()
    assert done["upsertPrincipal"]["principal"]["powers"] == [
        {"power": "LEAD", "workflows": ["support-ticket"], "teams": ["group:emea"], "events": None}
    ]
    # Left out, an update keeps the grants; [] removes them.
    kept = {k: v for k, v in nina.items() if k != "powers"}
    again = (await gql(client, GRANT, {"input": kept}, token=people["ada"])).ok()
    assert len(again["upsertPrincipal"]["principal"]["powers"]) == 1
    typo = {**nina, "powers": [{"power": "LEAD", "workflows": ["support-tickets"]}]}
    refused = (await gql(client, GRANT, {"input": typo}, token=people["ada"])).ok()
    assert refused["upsertPrincipal"]["__typename"] == "InvalidInput"
    assert "support-tickets" in refused["upsertPrincipal"]["message"]
    event = {**nina, "powers": [{"power": "INTEGRATION", "events": ["aproved"]}]}
    refused = (await gql(client, GRANT, {"input": event}, token=people["ada"])).ok()
    assert refused["upsertPrincipal"]["__typename"] == "InvalidInput"
    cleared = await gql(client, GRANT, {"input": {**nina, "powers": []}}, token=people["ada"])
    assert cleared.ok()["upsertPrincipal"]["principal"]["powers"] == []
    # A bare lead role reaches nothing.
    token = services.staff_tokens.mint("nina", services.clock.now())
    assert (await gql(client, WORK, {}, token=token)).error_codes == ["FORBIDDEN"]


CALENDARS = """{ calendars { name versions { effective } } }"""


async def test_calendars_are_read_by_every_signed_in_caller_and_no_anonymous_one(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    assert (await gql(client, CALENDARS)).error_codes == ["UNAUTHENTICATED"]
    for who in people:
        names = {
            c["name"] for c in (await gql(client, CALENDARS, token=people[who])).ok()["calendars"]
        }
        assert "uk-london" in names, who


async def test_a_lead_of_one_workflow_cannot_subscribe_to_another(world: World) -> None:
    """The subscriptions follow the queries' rules: a run or slot the lead may not read is
    refused as absent, and a work list outside their grants yields nothing of it."""
    client, people = world.client, world.people
    expense, ticket = await _expense_and_ticket(client, people)
    leah = people["leah"]  # lead of expense-approval only
    ticket_slot = ((await _run(client, people["app"], ticket["id"])) or {})["slots"][0]
    async with live.connect(client, leah) as socket:
        await socket.subscribe("run", SUB_RUN, {"id": ticket["id"]})
        await socket.subscribe("slot", SUB_SLOT, {"id": ticket_slot["id"]})
        refusals = {}
        for _ in range(2):
            message = await socket.next()
            assert message["type"] == "error", message
            refusals[message["id"]] = message["payload"][0]["extensions"]["code"]
        assert refusals == {"run": "NOT_FOUND", "slot": "NOT_FOUND"}
        await socket.subscribe("mine", SUB_RUN, {"id": expense["id"]})
        await socket.subscribe("work", SUB_WORK, {"filter": {"workflow": "support-ticket"}})
        await live.subscribed(world.services, 2)
        # A change on the ticket reaches neither of leah's subscriptions.
        claimed = await w.claim(client, people["tess"], ticket_slot["id"])
        assert claimed["__typename"] == "SlotSuccess", claimed
        assert await socket.quiet(0.5) == []


async def test_state_counts_and_runs_at_an_instant_keep_to_the_grants(world: World) -> None:
    """stateCounts counts every run of a workflow: a grant on the whole workflow only; the
    runs filter at an instant lists only runs the caller reads, like the list without it."""
    client, people = world.client, world.people
    expense = (await w.start_expense(client, people["app"], "EXP-ACC-H"))["run"]
    now = (world.services.clock.now()).isoformat()
    counts = """query($w: String!, $at: DateTime!) { stateCounts(workflow: $w, at: $at) {
      states { state runs } } }"""
    for who, workflow, allowed in (
        ("leah", "expense-approval", True),
        ("max", "vendor-onboarding", True),
        ("leah", "vendor-onboarding", False),
        ("tara", "support-ticket", False),  # her grant is narrowed to teams
        ("sam", "expense-approval", False),
        ("app", "expense-approval", False),
    ):
        found = await gql(client, counts, {"w": workflow, "at": now}, token=people[who])
        assert found.error_codes == ([] if allowed else ["FORBIDDEN"]), (who, workflow)
    at = {"workflow": "expense-approval", "stateAt": {"state": "submitted", "at": now}}
    listed = """query($f: RunFilter!) { runs(filter: $f) { edges { node { id } } } }"""
    for who, sees in (("leah", True), ("sid", False), ("tara", False)):
        edges = (await gql(client, listed, {"f": at}, token=people[who])).ok()["runs"]["edges"]
        assert ([e["node"]["id"] for e in edges] == [expense["id"]]) is sees, who


DELETE_SUBJECT = """mutation($type: String!, $externalId: String!) {
  deleteSubject(input: {type: $type, externalId: $externalId}) { __typename
  ... on DeleteSubjectSuccess { runs { id status } }
  ... on Refusal { code message } } }"""


async def test_a_subject_is_deleted_by_the_application_that_started_its_runs_or_an_admin(
    world: World,
) -> None:
    client, people = world.client, world.people
    expense, ticket = await _expense_and_ticket(client, people)

    async def delete(token: str, kind: str, external_id: str) -> dict[str, Any]:
        variables = {"type": kind, "externalId": external_id}
        return dict(
            (await gql(client, DELETE_SUBJECT, variables, token=token)).ok()["deleteSubject"]
        )

    # Staff without an application grant, and an integration of another workflow: FORBIDDEN.
    for who in ("fiona", "leah"):
        refused = await delete(people[who], "expense", "E-1")
        assert refused["code"] == "FORBIDDEN", refused
    refused = await delete(people["helpdesk"], "expense", "E-1")
    assert refused["code"] == "FORBIDDEN", refused
    # The back office is granted support-ticket, but the ticket is the help desk's run.
    refused = await delete(people["app"], "ticket", "T-1")
    assert refused["code"] == "FORBIDDEN", refused
    assert "started" in refused["message"]
    ticket_slots = (await _run(client, people["helpdesk"], ticket["id"]) or {})["slots"]
    assert [s["status"] for s in ticket_slots] == ["OPEN"]  # nothing changed
    # The application that started the run deletes its subject; an admin deletes the other.
    deleted = await delete(people["helpdesk"], "ticket", "T-1")
    assert deleted["runs"] == [{"id": ticket["id"], "status": "CANCELLED"}]
    deleted = await delete(people["ada"], "expense", "E-1")
    assert deleted["runs"] == [{"id": expense["id"], "status": "CANCELLED"}]


async def test_working_hours_and_leave_are_set_by_their_principal_or_an_admin_only(
    world: World,
) -> None:
    client, people = world.client, world.people
    fiona = "UHJpbmNpcGFsOmZpb25h"  # Principal:fiona
    hours = """mutation($input: SetWorkingHoursInput!) { setWorkingHours(input: $input) {
      __typename ... on Refusal { code } } }"""
    leave = """mutation($input: AddLeaveInput!) { addLeave(input: $input) {
      __typename ... on Refusal { code } } }"""
    span = {"from": "2026-12-24T00:00:00Z", "to": "2026-12-28T00:00:00Z"}
    windows = {"timeZone": "UTC", "windows": {"mon": [["09:00", "17:00"]]}}
    # A lead of fiona's team and workflow, a colleague, an integration: none reaches her.
    for who in ("leah", "frank", "app"):
        for text, name, data in ((hours, "setWorkingHours", windows), (leave, "addLeave", span)):
            answer = (
                await gql(
                    client, text, {"input": {"principalId": fiona, **data}}, token=people[who]
                )
            ).ok()[name]
            assert answer == {"__typename": "NotAllowed", "code": "FORBIDDEN"}, (who, name)
    for who, target in (("fiona", None), ("ada", fiona)):
        for text, name, data in ((hours, "setWorkingHours", windows), (leave, "addLeave", span)):
            answer = (
                await gql(
                    client, text, {"input": {"principalId": target, **data}}, token=people[who]
                )
            ).ok()[name]
            assert answer["__typename"].endswith("Success"), (who, name, answer)


async def test_a_teams_calendar_is_set_and_read_by_admins_only(world: World) -> None:
    client, people = world.client, world.people
    set_it = """mutation($input: SetTeamCalendarInput!) { setTeamCalendar(input: $input) {
      __typename ... on Refusal { code } } }"""
    read = "{ teamCalendars { team calendar } }"
    given = {"input": {"team": "role:finance", "calendar": "uk-london"}}
    # A lead of the finance team's workflow, a member of the team, an integration: none.
    for who in ("leah", "fiona", "app"):
        answer = (await gql(client, set_it, given, token=people[who])).ok()["setTeamCalendar"]
        assert answer == {"__typename": "NotAllowed", "code": "FORBIDDEN"}, who
        refused = await gql(client, read, {}, token=people[who])
        assert refused.error_codes == ["FORBIDDEN"], who
    answer = (await gql(client, set_it, given, token=people["ada"])).ok()["setTeamCalendar"]
    assert answer == {"__typename": "SetTeamCalendarSuccess"}
    listed = (await gql(client, read, {}, token=people["ada"])).ok()["teamCalendars"]
    assert listed == [{"team": "role:finance", "calendar": "uk-london"}]


#: Every console page and action, with a ticket's ids filled in; the test below fails on a
#: console route that is not listed here (each must keep to the API's access rules).
CONSOLE_ROUTES = {
    ("GET", "/console"): "/console",
    ("GET", "/console/slots/{slot_id:str}"): "/console/slots/{slot}",
    ("POST", "/console/slots/{slot_id:str}/{action:str}"): "/console/slots/{slot}/{action}",
    ("POST", "/console/claim-next"): "/console/claim-next",
    ("POST", "/console/sign-in"): None,  # signs in: the sign-in tests
    ("POST", "/console/sign-out"): None,  # signs out: the session tests
    ("GET", "/console/boards"): "/console/boards",
    ("GET", "/console/boards/{workflow:str}"): "/console/boards/support-ticket",
    ("GET", "/console/runs/{run_id:str}"): "/console/runs/{run}",
    ("POST", "/console/runs/{run_id:str}/move"): "/console/runs/{run}/move",
    ("GET", "/console/cards/slot/{slot_id:str}"): "/console/cards/slot/{slot}",
    ("GET", "/console/cards/run/{run_id:str}"): "/console/cards/run/{run}",
}


async def test_the_console_keeps_a_lead_of_one_workflow_to_it(world: World) -> None:
    listed = {
        (method, path)
        for handler in console_pages.ROUTES + console_runs.ROUTES + console_cards.ROUTES
        for path in handler.paths
        for method in handler.http_methods
    }
    assert listed == set(CONSOLE_ROUTES), "list the new console route in CONSOLE_ROUTES"
    client, people = world.client, world.people
    _, ticket = await _expense_and_ticket(client, people)
    run_id = ticket["id"]
    [slot] = (await _run(client, people["app"], run_id) or {})["slots"]
    ids = {"run": relay.from_global_id(run_id)[1], "slot": relay.from_global_id(slot["id"])[1]}
    async with conftest.asgi_client(world.services) as anonymous:
        for (method, _), path in CONSOLE_ROUTES.items():
            if path is None:
                continue
            url = path.format(action="claim", **ids)
            answer = await anonymous.request(method, url, headers=SAME)
            assert answer.status_code == 401, (method, url)
    signed = await client.post("/console/sign-in", data={"token": people["leah"]}, headers=SAME)
    assert signed.status_code == 303
    for action in ("claim", "release", "assign", "complete"):
        url = f"/console/slots/{ids['slot']}/{action}"
        assert (await client.post(url, data={"to": "leah"}, headers=SAME)).status_code == 404
    assert (await client.get(f"/console/slots/{ids['slot']}")).status_code == 404
    assert (await client.get(f"/console/runs/{ids['run']}")).status_code == 404
    assert (await client.get(f"/console/cards/slot/{ids['slot']}")).status_code == 404
    assert (await client.get(f"/console/cards/run/{ids['run']}")).status_code == 404
    moved = await client.post(
        f"/console/runs/{ids['run']}/move", data={"_move": "reopen"}, headers=SAME
    )
    assert moved.status_code == 404
    assert ids["run"] not in (await client.get("/console/boards/support-ticket")).text
    assert ids["slot"] not in (await client.get("/console")).text
    assert (await _run(client, people["app"], run_id) or {})["state"] == ticket["state"]
