"""The automation actions ``add_candidate`` and ``escalate`` through the worker's lane, as
``automation:<id>`` with the author's powers: ``addCandidate``'s use case and the timer
batch's escalation of one slot (``escalation.escalate``), each line stamped with the
automation, its version and the enrolling event. An escalation by the use case leaves the
slot as the reminder's timer leaves it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from taskflow import clock
from taskflow.service.access import access
from taskflow.service.access import principals as principal_service
from taskflow.service.clocks import escalation, timers
from taskflow.service.common.container import Services
from taskflow.store.runs import runs as rows
from tests.integration.test_automation_acting import expense, lines_of
from tests.integration.test_automation_actions import drain, kinds, published_by

pytestmark = pytest.mark.anyio

WIDEN: dict[str, Any] = {
    "name": "big expenses: the finance leads and legal look too",
    "trigger": {"on": "slot.opened", "slot": "finance_review"},
    "conditions": [{"op": ">", "args": [{"ref": "subject.amount"}, {"lit": 1000}]}],
    "actions": [
        {"do": "escalate", "to": "role:finance-lead"},
        {"do": "add_candidate", "to": "user:lee"},
        {"do": "add_candidate", "to": "user:sam"},  # the submitter: kept out
        {"do": "add_candidate", "to": "group:finance-uk"},  # not a principal nor a role
        {"do": "escalate", "to": "team:nobody"},
    ],
}


async def review_of(services: Services, run_id: str) -> Any:
    async with services.db.connection() as conn:
        slot_id = await conn.fetchval(
            "SELECT id::text FROM slot WHERE run = $1::uuid AND name = 'finance_review'", run_id
        )
        return await rows.get_slot(conn, slot_id)


async def admitted(services: Services, slot: Any, login: str) -> bool:
    person = await principal_service.get(services, login)
    assert person is not None
    return bool(slot.audience.admits(access.keys(person)))


async def test_add_candidate_and_escalate_act_as_the_automation(
    services: Services, people: dict[str, str]
) -> None:
    automation = await published_by(services, "leah", WIDEN)
    big = await expense(services, "EXP-WIDE", 5000.0)
    small = await expense(services, "EXP-NARROW", 20.0)
    await drain(services)

    written = await lines_of(services, big)
    assert kinds(written) == [
        "slot.escalated",
        "slot.candidate_added",
        "refused",  # addCandidate's refusal is on the timeline, as a person's would be
        "automation.action_skipped",
        "automation.action_skipped",
        "automation.action_skipped",
    ]
    async with services.db.connection() as conn:
        opened = await conn.fetchval(
            "SELECT id FROM audit_event WHERE run = $1::uuid AND kind = 'slot.opened' "
            "AND details->>'slot' = 'finance_review'",
            big,
        )
    for line in written:
        assert line["actor"] == f"automation:{automation}"
        assert line["details"]["automation"] == automation
        assert line["details"]["automation_version"] == 1
        assert line["details"]["enrolled_by"] == opened
        assert line["details"]["enrolling_event"] == "slot.opened"
    assert written[0]["details"]["added"] == "role:finance-lead"
    assert written[1]["details"]["added"] == "user:lee"
    assert written[2]["details"]["code"] == "NOT_CANDIDATE"
    whys = [line["details"]["why"] for line in written[3:]]
    assert "'sam' is kept out" in whys[0]
    assert "user:<id> or role:<name>" in whys[1]
    assert "team:nobody" in whys[2]

    review = await review_of(services, big)
    assert review.version == 3  # opened, escalated, a candidate added
    for login, expected in (("lee", True), ("fiona", True), ("sam", False), ("sid", False)):
        assert await admitted(services, review, login) is expected, login
    untouched = await review_of(services, small)
    assert untouched.version == 1
    assert not await admitted(services, untouched, "lee")
    assert await lines_of(services, small) == []


async def test_an_escalation_by_the_use_case_is_the_reminders_escalation(
    services: Services, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    by_timer = await expense(services, "EXP-TIMER", 5000.0)
    by_hand = await expense(services, "EXP-HAND", 5000.0)
    leah = await principal_service.get(services, "leah")
    assert leah is not None
    slot = await review_of(services, by_hand)
    escalated = await escalation.escalate(services, leah, slot.id, "role:finance-lead")
    assert escalated.version == slot.version + 1
    escalated = await review_of(services, by_hand)  # as stored (its timer escalates it later)

    # Nobody picks the other one up within four business hours: its reminder escalates it
    # to the finance leads (expense_approval.py, finance_review's on_breach("assigned")).
    frozen_clock.set(datetime(2026, 12, 1, 13, 1, tzinfo=UTC))
    assert await timers.run_due(services, frozen_clock.now()) >= 1
    fired = await review_of(services, by_timer)
    assert (fired.audience, fired.version) == (escalated.audience, escalated.version)
    async with services.db.connection() as conn:
        lines = await conn.fetch(
            "SELECT run::text, actor, details FROM audit_event WHERE kind = 'slot.escalated' "
            "AND run = ANY($1::uuid[]) ORDER BY id",
            [by_hand, by_timer],
        )
    hand = [x for x in lines if x["run"] == by_hand]
    timer = [x for x in lines if x["run"] == by_timer]
    assert (hand[0]["actor"], timer[0]["actor"]) == ("leah", None)
    assert (
        hand[0]["details"]
        == timer[0]["details"]
        == {
            "slot": "finance_review",
            "added": "role:finance-lead",
        }
    )
