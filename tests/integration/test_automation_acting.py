"""The worker's automation lane over a real database: a published automation acts once per
matching event as ``automation:<id>``, in the transaction of its decision; an author who
loses the grant stops their automation acting, and it is flagged."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import pytest

from taskflow.core.automations import timeline
from taskflow.core.operate.attention import Reason
from taskflow.service.access import principals as principal_service
from taskflow.service.automations import acting, automations
from taskflow.service.common.container import Services
from taskflow.service.operate import attention
from tests.api.workflows import EXPENSE
from tests.integration.starting import app_starts

pytestmark = pytest.mark.anyio
WORKFLOW = "expense-approval"
BIG_EXPENSES: dict[str, Any] = {
    "name": "big expenses go to fiona",
    "trigger": {"on": "slot.opened", "slot": "finance_review"},
    "conditions": [{"op": ">", "args": [{"ref": "subject.amount"}, {"lit": 1000}]}],
    "actions": [
        {"do": "comment", "text": "A big one: fiona looks at it."},
        {"do": "add_label", "label": "big"},
        {"do": "assign", "to": "user:fiona"},
    ],
}


async def published(services: Services, document: dict[str, Any]) -> str:
    leah = await principal_service.get(services, "leah")
    assert leah is not None
    new = await automations.create(services, leah, WORKFLOW, document)
    await automations.move(services, leah, new, "publish")
    return new


async def expense(services: Services, ref: str, amount: float) -> str:
    attrs = {**EXPENSE, "reference": ref, "amount": amount}
    return (await app_starts(services, WORKFLOW, ref, attrs, subject_type="expense")).id


async def lines_of(services: Services, run_id: str) -> list[dict[str, Any]]:
    async with services.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT kind, actor, details FROM audit_event WHERE run = $1::uuid AND actor LIKE "
            "'automation:%' ORDER BY id",
            run_id,
        )
    return [dict(r) for r in rows]


async def holder(services: Services, run_id: str) -> str | None:
    async with services.db.connection() as conn:
        found: str | None = await conn.fetchval(
            "SELECT holder FROM slot WHERE run = $1::uuid AND name = 'finance_review'", run_id
        )
    return found


async def test_a_published_automation_acts_once_per_matching_event(
    services: Services, people: dict[str, str]
) -> None:
    await expense(services, "EXP-BEFORE", 5000.0)  # before it was published: not its business
    services.clock.advance(timedelta(seconds=1))  # type: ignore[attr-defined]
    automation = await published(services, BIG_EXPENSES)
    services.clock.advance(timedelta(seconds=1))  # type: ignore[attr-defined]
    big = await expense(services, "EXP-BIG", 5000.0)
    small = await expense(services, "EXP-SMALL", 20.0)

    assert await acting.run_due(services) == 2  # one line each (finance_review opened)
    assert await acting.run_due(services) == 0  # decided: never again

    actor = f"automation:{automation}"
    written = await lines_of(services, big)
    # The assignment's own lines (slot.assigned, the pickup clock met) are its too.
    assert [(line["kind"], line["actor"]) for line in written][:3] == [
        ("automation.comment", actor),
        ("automation.label", actor),
        ("slot.assigned", actor),
    ]
    for line in written:
        assert line["details"]["automation"] == automation
        assert line["details"]["automation_version"] == 1
        assert line["details"]["enrolling_event"] == "slot.opened"
        assert line["details"]["automation_depth"] == 1
    assert written[0]["details"]["text"] == "A big one: fiona looks at it."
    assert await holder(services, big) == "fiona"
    assert await lines_of(services, small) == []
    async with services.db.connection() as conn:
        decisions = await conn.fetch(
            "SELECT outcome, count(*) AS n FROM automation_act GROUP BY outcome ORDER BY outcome"
        )
    # Only acting leaves a decision row; the skipped line just left the queue.
    assert [(d["outcome"], d["n"]) for d in decisions] == [("act", 1)]
    assert await queued(services) == 0


async def queued(services: Services) -> int:
    async with services.db.connection() as conn:
        return int(await conn.fetchval("SELECT count(*) FROM automation_line"))


async def test_a_line_committed_after_a_later_one_was_decided_is_still_decided(
    services: Services, people: dict[str, str]
) -> None:
    """Line ids are taken at insert: a slow transaction's line can commit after a later id
    was decided. A cursor over ids would pass it by; the queue does not."""
    automation = await published(services, BIG_EXPENSES)
    services.clock.advance(timedelta(seconds=1))  # type: ignore[attr-defined]
    async with services.db.transaction() as slow:
        inside = dataclasses.replace(services, db=services.db.bound(slow))
        early = await expense(inside, "EXP-SLOW", 5000.0)  # the lower line id, not committed
        quick = await expense(services, "EXP-QUICK", 5000.0)
        assert await acting.run_due(services) == 1  # the committed one
    assert await acting.run_due(services) == 1  # the slow one, once it committed
    assert await acting.run_due(services) == 0
    for run in (early, quick):
        kinds = [line["kind"] for line in await lines_of(services, run)]
        assert kinds[:3] == ["automation.comment", "automation.label", "slot.assigned"]
        assert {line["actor"] for line in await lines_of(services, run)} == {
            f"automation:{automation}"
        }


async def test_the_timeline_kinds_the_queue_listens_to_are_the_automations_map(
    services: Services,
) -> None:
    async with services.db.connection() as conn:
        for kind, trigger in {**timeline.KIND_TO_TRIGGER, "run.started": None}.items():
            assert await conn.fetchval("SELECT automation_trigger_of($1)", kind) == trigger


async def test_an_author_who_loses_the_grant_stops_their_automation(
    services: Services, people: dict[str, str]
) -> None:
    automation = await published(services, BIG_EXPENSES)
    services.clock.advance(timedelta(seconds=1))  # type: ignore[attr-defined]
    ada = await principal_service.get(services, "ada")
    leah = await principal_service.get(services, "leah")
    assert ada is not None
    assert leah is not None
    await principal_service.upsert(
        services,
        ada,
        {"id": "leah", "display_name": leah.display_name, "roles": ["finance"], "powers": []},
    )
    run = await expense(services, "EXP-ORPHAN", 5000.0)
    assert await acting.run_due(services) == 1
    written = await lines_of(services, run)
    assert [line["kind"] for line in written] == ["automation.stopped"]
    assert "may no longer manage" in written[0]["details"]["why"]
    assert await holder(services, run) is None
    row = await automations.get(services, ada, automation)
    assert row is not None
    assert "may no longer manage" in row.attention
    # Flagged, and in needsAttention with its author and the run it stopped on.
    items, _ = await attention.listing(
        services, ada, reasons=[Reason.AUTOMATION_STOPPED], workflow=None, after=None, limit=10
    )
    assert [(i.ref, i.run_id, i.principal) for i in items] == [(automation, run, "leah")]
    assert "may no longer manage" in items[0].detail
    # It takes no further event until it is published again.
    await expense(services, "EXP-ORPHAN-2", 5000.0)
    assert await acting.run_due(services) == 0


async def test_an_event_too_many_automation_hops_deep_stops_the_automation(
    services: Services, people: dict[str, str]
) -> None:
    automation = await published(services, BIG_EXPENSES)
    services.clock.advance(timedelta(seconds=1))  # type: ignore[attr-defined]
    run = await expense(services, "EXP-LOOP", 5000.0)
    # As if automations feeding each other had opened this slot: its line is stamped (as
    # the worker stamps its actions' lines) MAX_DEPTH hops deep. No shipped action opens a
    # slot yet, so the chain is written here.
    async with services.db.connection() as conn:
        await conn.execute(
            "UPDATE audit_event SET details = details || '{\"automation_depth\": 3}'::jsonb "
            "WHERE run = $1::uuid AND kind = 'slot.opened'",
            run,
        )
    assert await acting.run_due(services) == 1
    assert await lines_of(services, run) == []  # it did nothing
    assert await holder(services, run) is None
    async with services.db.connection() as conn:
        outcome = await conn.fetchval("SELECT outcome FROM automation_act")
        attention = await conn.fetchval(
            "SELECT attention FROM automation WHERE id = $1::uuid", automation
        )
    assert outcome == "loop"
    assert attention.startswith("stopped a loop: event is 3 automation hops deep")
