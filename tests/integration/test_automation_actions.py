"""The worker's actions beyond comments, labels and assignments, each through the use case
a person's or an application's call runs, as ``automation:<id>`` with the author's powers:
raise_event (raiseEvent), set_field (updateSubject), start_run (startRun). A refusal of
the use case is an ``automation.action_skipped`` line saying why; the other actions go on."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from taskflow.service.access import principals as principal_service
from taskflow.service.automations import acting, automations
from taskflow.service.common.container import Services
from taskflow.service.runs import runs
from tests.integration.test_automation_acting import WORKFLOW, expense, lines_of

pytestmark = pytest.mark.anyio


async def published_by(services: Services, author: str, document: dict[str, Any]) -> str:
    who = await principal_service.get(services, author)
    assert who is not None
    new = await automations.create(services, who, WORKFLOW, document)
    await automations.move(services, who, new, "publish")
    services.clock.advance(timedelta(seconds=1))  # type: ignore[attr-defined]
    return new


async def drain(services: Services) -> None:
    while await acting.run_due(services):
        pass


async def run_row(services: Services, run_id: str) -> dict[str, Any]:
    async with services.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT r.state, r.status, s.attributes FROM run r JOIN subject s ON s.id = r.subject "
            "WHERE r.id = $1::uuid",
            run_id,
        )
    assert row is not None
    return dict(row)


def kinds(written: list[dict[str, Any]]) -> list[str]:
    return [line["kind"] for line in written]


SMALL_APPROVED = {
    "name": "small expenses are approved by the rule",
    "trigger": {"on": "slot.opened", "slot": "finance_review"},
    "conditions": [{"op": "<", "args": [{"ref": "subject.amount"}, {"lit": 50}]}],
    "actions": [
        {"do": "raise_event", "event": "reviewed", "payload": {"decision": "approve"}},
        {"do": "raise_event", "event": "no-such-event"},
        {"do": "comment", "text": "approved by the small-expenses rule"},
    ],
}


async def test_raise_event_completes_the_waiting_slot_as_the_automation(
    services: Services, people: dict[str, str]
) -> None:
    automation = await published_by(services, "leah", SMALL_APPROVED)
    small = await expense(services, "EXP-TINY", 20.0)
    big = await expense(services, "EXP-HUGE", 5000.0)
    await drain(services)

    actor = f"automation:{automation}"
    written = await lines_of(services, small)
    assert {line["actor"] for line in written} == {actor}
    # The engine's lines the raise caused carry the automation too (and the loop depth).
    async with services.db.connection() as conn:
        stamped = await conn.fetch(
            "SELECT kind, details FROM audit_event WHERE run = $1::uuid "
            "AND details->>'automation' = $2 ORDER BY id",
            small,
            automation,
        )
    assert {"slot.satisfied", "run.transitioned", "slot.opened"} <= {r["kind"] for r in stamped}
    for line in stamped:
        assert line["details"]["enrolling_event"] == "slot.opened"
        assert line["details"]["automation_depth"] == 1
    # The second raise names an event the workflow does not have: refused, said, and the
    # comment after it still written.
    skipped = [line for line in written if line["kind"] == "automation.action_skipped"]
    assert [s["details"]["do"] for s in skipped] == ["raise_event"]
    assert "no-such-event" in skipped[0]["details"]["why"]
    assert kinds(written)[-1] == "automation.comment"
    assert (await run_row(services, small))["state"] != "submitted"
    assert await lines_of(services, big) == []
    assert (await run_row(services, big))["state"] == "submitted"


async def test_set_field_and_start_run_act_with_the_authors_application_powers(
    services: Services, people: dict[str, str]
) -> None:
    # Ada (an admin) may update subjects and start runs; Leah (a lead) may not.
    by_ada = await published_by(
        services,
        "ada",
        {
            "name": "flag and restart cancelled claims",
            "trigger": {"on": "run.ended"},
            "actions": [
                {"do": "set_field", "field": "department", "value": "audit"},
                {"do": "start_run", "workflow": WORKFLOW},
            ],
        },
    )
    by_leah = await published_by(
        services,
        "leah",
        {
            "name": "the same, by a lead",
            "trigger": {"on": "run.ended"},
            "actions": [{"do": "set_field", "field": "department", "value": "leah"}],
        },
    )
    first = await expense(services, "EXP-AGAIN", 300.0)
    ada = await principal_service.get(services, "ada")
    assert ada is not None
    await runs.cancel_run(services, ada, run_id=first, reason="sent twice")
    await drain(services)

    async with services.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT r.id::text AS id, r.status, r.started_by FROM run r JOIN subject s "
            "ON s.id = r.subject WHERE s.external_id = 'EXP-AGAIN' ORDER BY r.started_at, r.id"
        )
    assert sorted((r["status"], r["started_by"]) for r in rows) == [
        ("active", f"automation:{by_ada}"),
        ("cancelled", "app"),
    ]
    assert (await run_row(services, first))["attributes"]["department"] == "audit"
    written = await lines_of(services, first)
    by_lead = [line for line in written if line["actor"] == f"automation:{by_leah}"]
    assert kinds(by_lead) == ["automation.action_skipped"]
    assert by_lead[0]["details"]["do"] == "set_field"
    # Each action once: a second pass finds nothing to do.
    assert await acting.run_due(services) == 0
