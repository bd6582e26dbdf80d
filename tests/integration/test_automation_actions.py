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
from tests.api.workflows import EXPENSE
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


DELAYED = {
    "name": "a nudge an hour after a big expense opens",
    "trigger": {"on": "slot.opened", "slot": "finance_review"},
    "conditions": [{"op": ">", "args": [{"ref": "subject.amount"}, {"lit": 1000}]}],
    "actions": [
        {"do": "comment", "text": "noted"},
        {"do": "delay", "minutes": 60},
        {"do": "comment", "text": "an hour on: still open?"},
        {"do": "delay", "minutes": 30},
        {"do": "add_label", "label": "slow"},
    ],
}


async def waiting(services: Services) -> list[tuple[int, str]]:
    async with services.db.connection() as conn:
        rows = await conn.fetch("SELECT next_action, due_at FROM automation_pending ORDER BY id")
    return [(r["next_action"], r["due_at"].isoformat()) for r in rows]


async def test_a_delay_node_holds_the_rest_until_it_ends_and_they_happen_once(
    services: Services, people: dict[str, str]
) -> None:
    automation = await published_by(services, "leah", DELAYED)
    run = await expense(services, "EXP-LATER", 5000.0)
    await drain(services)
    written = await lines_of(services, run)
    assert kinds(written) == ["automation.comment", "automation.delayed"]
    due = services.clock.now() + timedelta(minutes=60)
    assert written[1]["details"]["until"] == due.isoformat()
    assert await waiting(services) == [(2, due.isoformat())]

    services.clock.advance(timedelta(minutes=59))  # type: ignore[attr-defined]
    await drain(services)
    assert len(await lines_of(services, run)) == 2  # not yet

    services.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]
    await drain(services)
    await drain(services)  # taken again: nothing more
    written = await lines_of(services, run)
    assert kinds(written)[2:] == ["automation.comment", "automation.delayed"]
    assert written[2]["details"]["text"] == "an hour on: still open?"
    assert {line["details"]["automation"] for line in written} == {automation}
    assert [n for n, _ in await waiting(services)] == [4]

    # Paused before the second delay ends: the rest is dropped, and says so.
    leah = await principal_service.get(services, "leah")
    assert leah is not None
    await automations.move(services, leah, automation, "pause")
    services.clock.advance(timedelta(minutes=30))  # type: ignore[attr-defined]
    await drain(services)
    written = await lines_of(services, run)
    assert kinds(written)[4:] == ["automation.action_skipped"]
    assert "paused" in written[4]["details"]["why"]
    assert await waiting(services) == []


async def test_a_business_delay_counts_working_time_on_the_workflows_calendar(
    services: Services, people: dict[str, str]
) -> None:
    document = {**DELAYED, "actions": [{"do": "delay", "minutes": 60, "business": True}]}
    await published_by(services, "leah", document)
    run = await expense(services, "EXP-BUSINESS", 5000.0)
    await drain(services)
    [delayed] = await lines_of(services, run)
    assert delayed["details"]["kind"] == "business"
    wall = services.clock.now() + timedelta(minutes=60)
    # Expense approval works on uk-london office hours: never sooner than an hour of wall time.
    assert delayed["details"]["until"] >= wall.isoformat()


WAITING = {
    "name": "once the receipts are in, say so; give up after a day",
    "trigger": {"on": "slot.opened", "slot": "finance_review"},
    "conditions": [{"op": ">", "args": [{"ref": "subject.amount"}, {"lit": 1000}]}],
    "actions": [
        {
            "do": "wait",
            "until": {"op": ">=", "args": [{"ref": "subject.receipts"}, {"lit": 5}]},
            "timeout_minutes": 24 * 60,
        },
        {"do": "comment", "text": "receipts in (or a day gone)"},
    ],
}


async def test_a_wait_node_goes_on_when_its_condition_holds_or_its_timeout_passes(
    services: Services, people: dict[str, str]
) -> None:
    automation = await published_by(services, "leah", WAITING)
    held = await expense(services, "EXP-RECEIPTS", 5000.0)  # 3 receipts: waits
    timed = await expense(services, "EXP-NEVER", 5000.0)
    await drain(services)
    assert await lines_of(services, held) == []
    assert len(await waiting(services)) == 2

    app = await principal_service.get(services, "app")
    assert app is not None
    attrs = {**EXPENSE, "reference": "EXP-RECEIPTS", "amount": 5000.0, "receipts": 5}
    await runs.update_subject(
        services, app, subject_type="expense", external_id="EXP-RECEIPTS", attributes=attrs
    )
    services.clock.advance(timedelta(seconds=30))  # type: ignore[attr-defined]
    await drain(services)
    assert await lines_of(services, held) == []  # looked at again only a minute on
    services.clock.advance(timedelta(seconds=30))  # type: ignore[attr-defined]
    await drain(services)
    written = await lines_of(services, held)
    assert [(line["kind"], line["details"].get("outcome")) for line in written] == [
        ("automation.waited", "held"),
        ("automation.comment", None),
    ]
    assert {line["details"]["automation"] for line in written} == {automation}
    assert await lines_of(services, timed) == []

    services.clock.advance(timedelta(days=1))  # type: ignore[attr-defined]
    await drain(services)
    await drain(services)
    written = await lines_of(services, timed)
    assert [(line["kind"], line["details"].get("outcome")) for line in written] == [
        ("automation.waited", "timed_out"),
        ("automation.comment", None),
    ]
    assert await waiting(services) == []


async def test_notify_writes_a_notification_per_person_through_the_outbox(
    services: Services, people: dict[str, str]
) -> None:
    document = {
        **SMALL_APPROVED,
        "conditions": [],
        "actions": [
            {"do": "notify", "to": "role:finance-lead", "message": "a new claim to review"},
            {"do": "notify", "to": "user:nobody", "message": "lost"},
        ],
    }
    await published_by(services, "leah", document)
    run = await expense(services, "EXP-NOTIFY", 300.0)
    await drain(services)
    async with services.db.connection() as conn:
        sent = await conn.fetch(
            "SELECT recipient, message FROM notification WHERE run = $1::uuid", run
        )
    assert [(r["recipient"], r["message"]) for r in sent] == [("leah", "a new claim to review")]
    written = await lines_of(services, run)
    assert [(line["kind"], line["details"].get("to")) for line in written] == [
        ("automation.notified", "role:finance-lead"),
        ("automation.action_skipped", None),
    ]
    assert written[0]["details"]["recipients"] == ["leah"]
    assert written[1]["details"]["why"] == "no one is 'user:nobody'"
