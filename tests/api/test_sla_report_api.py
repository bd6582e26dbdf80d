"""slaReport, Run.leadTime and the at-risk work list over GraphQL, as a manager reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import reports_dataset as ds
from tests.api.conftest import World
from tests.conftest import gql

pytestmark = pytest.mark.anyio

OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"
REPORT = (OPERATIONS / "sla_report.graphql").read_text()
LEAD_TIME = (OPERATIONS / "run_lead_time.graphql").read_text()


async def test_the_report_operation_by_team_and_week(world: World, loaded: dict[str, str]) -> None:
    client, people = world.client, world.people
    variables = {
        "from": ds.FROM.isoformat(),
        "groupBy": ["PERIOD", "AUDIENCE"],
        "zone": "uk-london",
    }
    data = (await gql(client, REPORT, variables, token=people["max"])).ok()["slaReport"]
    assert data["zone"] == "Europe/London"
    assert data["to"] == data["generatedAt"] == "2026-12-01T09:00:00+00:00"
    rows = {(r["periodLabel"], r["audience"]): r for r in data["rows"]}
    assert sorted(rows) == [
        ("2026-11-23", "group:emea"),
        ("2026-11-23", "role:finance"),
        ("2026-11-23", "role:procurement"),
        ("2026-11-30", "group:emea"),
        ("2026-11-30", "role:finance"),
        ("2026-11-30", "role:procurement"),
    ]
    finance = rows[("2026-11-23", "role:finance")]
    assert (finance["opened"], finance["met"], finance["breached"]) == (4, 2, 2)
    assert finance["breachRateText"] == "50.0 %"
    # Pickups S1 2.5h, S2 0.5h, S5 3h business: the median is S1's.
    assert finance["pickup"]["business"]["p50"] == {
        "seconds": 9000.0,
        "text": "2h 30m business time",
    }
    assert finance["pickup"]["real"]["p50"]["text"] == "3h real time"
    assert rows[("2026-11-30", "role:procurement")]["opened"] == 0
    assert rows[("2026-11-30", "group:emea")]["atRiskNow"] == 1
    lead = rows[("2026-11-23", "role:procurement")]["leadTime"]
    assert lead["total"]["text"] == "5h real time"
    assert lead["worked"]["text"] == "2h 30m real time"
    assert lead["workedShare"] == 0.5


async def test_staff_without_the_role_are_refused(world: World) -> None:
    client, people = world.client, world.people
    variables = {"from": ds.FROM.isoformat()}
    refused = await gql(client, REPORT, variables, token=people["fiona"])
    assert refused.error_codes == ["FORBIDDEN"]
    assert "manager" in refused.errors[0]["message"]
    anonymous = await gql(client, REPORT, variables)
    assert anonymous.error_codes == ["UNAUTHENTICATED"]


async def test_bad_arguments_say_what_to_fix(world: World) -> None:
    client, people = world.client, world.people
    backwards = await gql(
        client,
        REPORT,
        {"from": ds.TO.isoformat(), "to": ds.FROM.isoformat()},
        token=people["max"],
    )
    assert backwards.error_codes == ["INVALID_INPUT"]
    zone = await gql(
        client, REPORT, {"from": ds.FROM.isoformat(), "zone": "Mars/Olympus"}, token=people["max"]
    )
    assert zone.error_codes == ["INVALID_INPUT"]
    assert "Mars/Olympus" in zone.errors[0]["message"]


async def test_run_lead_time(world: World, loaded: dict[str, str]) -> None:
    client, people = world.client, world.people
    from taskflow.api.graphql.common import relay

    run_id = relay.to_global_id("Run", loaded["run:S2"])
    data = (await gql(client, LEAD_TIME, {"id": run_id}, token=people["max"])).ok()
    total = data["run"]["leadTime"]["total"]
    # Wed 25 09:00 to now (Tue 1 09:00); held 09:30-10:00 and 11:00 -> Thu 09:00.
    assert total["total"] == {"seconds": 6 * 86400.0, "text": "6d real time"}
    assert total["worked"] == {"seconds": 22.5 * 3600, "text": "22h 30m real time"}
    assert total["waiting"]["text"] == "5d 1h 30m real time"
    [state] = data["run"]["leadTime"]["states"]
    assert state["state"] == "submitted"
    assert state["leadTime"]["worked"]["seconds"] == 22.5 * 3600
    # Staff who cannot see the run get null, as for a run that does not exist.
    hidden = (await gql(client, LEAD_TIME, {"id": run_id}, token=people["sasha"])).ok()
    assert hidden["run"] is None


AT_RISK = """query($after: String) { work(first: 1, after: $after, filter: {atRisk: true}) {
  totalCount pageInfo { hasNextPage endCursor } edges { node { name holder dueAt } } } }"""


async def test_at_risk_list_least_time_left_first(world: World, loaded: dict[str, str]) -> None:
    client, services, people = world.client, world.services, world.people
    async with services.db.transaction() as conn:
        await conn.execute(
            "UPDATE sla_clock SET due_at = $2 WHERE slot = $1::uuid",
            loaded["S3"],
            ds.at(31, 9, 15),
        )
    first = (await gql(client, AT_RISK, token=people["max"])).ok()["work"]
    assert first["totalCount"] == 2
    assert [e["node"]["name"] for e in first["edges"]] == ["manager_approval"]
    after = first["pageInfo"]["endCursor"]
    second = (await gql(client, AT_RISK, {"after": after}, token=people["max"])).ok()["work"]
    assert [e["node"]["holder"] for e in second["edges"]] == ["frank"]
    assert second["pageInfo"]["hasNextPage"] is False
    refused = await gql(client, AT_RISK, token=people["fiona"])
    assert refused.error_codes == ["FORBIDDEN"]


async def test_lead_time_and_report_of_a_real_expense(world: World) -> None:
    client, people, frozen_clock = world.client, world.people, world.clock
    from datetime import timedelta

    from taskflow.clock import FrozenClock
    from tests.api import workflows as w

    assert isinstance(frozen_clock, FrozenClock)
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-LT", w.EXPENSE
    )
    run_id = started["run"]["id"]
    review = await w.slot_named(client, people["fiona"], "finance_review")
    frozen_clock.advance(timedelta(hours=1))
    await w.claim(client, people["fiona"], review["id"])
    frozen_clock.advance(timedelta(hours=2))
    done = await w.complete(client, people["fiona"], review["id"], {"decision": "approve"})
    assert done["run"]["state"] == "manager_approval"
    frozen_clock.advance(timedelta(hours=3))

    lead = (await gql(client, LEAD_TIME, {"id": run_id}, token=people["max"])).ok()
    total = lead["run"]["leadTime"]["total"]
    assert (total["total"]["text"], total["worked"]["text"]) == ("6h real time", "2h real time")
    assert [
        (s["state"], s["leadTime"]["total"]["seconds"], s["leadTime"]["worked"]["seconds"])
        for s in lead["run"]["leadTime"]["states"]
    ] == [("submitted", 3 * 3600.0, 2 * 3600.0), ("manager_approval", 3 * 3600.0, 0.0)]

    variables = {"from": "2026-12-01T00:00:00Z", "groupBy": ["SLOT"]}
    rows = (await gql(client, REPORT, variables, token=people["max"])).ok()["slaReport"]["rows"]
    by_slot = {r["slot"]: r for r in rows}
    review_row = by_slot["finance_review"]
    assert (review_row["opened"], review_row["met"], review_row["stillOpen"]) == (1, 1, 0)
    assert review_row["pickup"]["business"]["p50"]["text"] == "1h business time"
    assert review_row["completion"]["business"]["p50"]["text"] == "3h business time"
    assert review_row["leadTime"]["worked"]["text"] == "2h real time"
    assert by_slot["manager_approval"]["stillOpen"] == 1


async def test_a_manager_without_the_lead_role_reads_the_at_risk_list_and_the_report(
    world: World, loaded: dict[str, str]
) -> None:
    client, services = world.client, world.services
    from taskflow.service.access import principals

    # Mona manages Sam and Sid but leads no team: she sees what a lead sees, whoever holds
    # it (the at-risk slots are mostly open ones nobody holds yet).
    mona = {
        "id": "mona",
        "display_name": "Mona Manager",
        "roles": ["manager"],
        "powers": [{"power": "manager"}],
        "attributes": {"reports": ["sam", "sid"]},
    }
    await principals.load(services, [mona])
    token = services.staff_tokens.mint("mona", services.clock.now())
    listed = (
        await gql(
            client,
            """query { work(first: 10, filter: {atRisk: true}) {
                 totalCount edges { node { name holder } } } }""",
            token=token,
        )
    ).ok()["work"]
    assert listed["totalCount"] == 1
    assert [(e["node"]["name"], e["node"]["holder"]) for e in listed["edges"]] == [
        ("manager_approval", "frank")
    ]
    report = await gql(client, REPORT, {"from": ds.FROM.isoformat()}, token=token)
    assert [r["opened"] for r in report.ok()["slaReport"]["rows"]] == [6]
