"""A ``taskflow worker`` process SIGKILLed while it works through automations' decisions: a
second worker finishes the work and every action happened exactly once (the decision row
commits with the actions, or neither does)."""

from __future__ import annotations

import asyncio
import dataclasses
import signal
from pathlib import Path
from typing import Any

import pytest

from taskflow import clock
from taskflow.config import config
from taskflow.service.access import principals as principal_service
from taskflow.service.automations import automations
from tests.acceptance.conftest import wait_until
from tests.acceptance.test_workers import Workers, query
from tests.api.workflows import EXPENSE
from tests.conftest import services_with
from tests.integration.starting import app_starts
from tests.integration.test_automation_acting import BIG_EXPENSES, WORKFLOW
from tests.integration.test_automation_candidates import WIDEN

RUNS = 150


def _prepare(
    url: str,
    settings: config.Settings,
    document: dict[str, Any] = BIG_EXPENSES,
    runs: int = RUNS,
) -> str:
    """Leah's automation (``document``) published, then ``runs`` big expenses started: its id."""

    async def go() -> str:
        async with services_with(
            url, dataclasses.replace(settings, database_url=url), clock.SystemClock()
        ) as services:
            leah = await principal_service.get(services, "leah")
            assert leah is not None
            made = await automations.create(services, leah, WORKFLOW, document)
            await automations.move(services, leah, made, "publish")
            for n in range(runs):
                ref = f"EXP-K-{n}"
                attrs = {**EXPENSE, "reference": ref, "amount": 5000.0}
                await app_starts(services, WORKFLOW, ref, attrs, subject_type="expense")
            return made

    return asyncio.run(go())


def _decided(url: str) -> int:
    return int(query(url, "SELECT count(*) AS n FROM automation_act")[0]["n"])


@pytest.mark.slow
def test_a_worker_killed_mid_way_leaves_each_action_done_exactly_once(
    database_url: str, settings: config.Settings, tmp_path: Path
) -> None:
    workers = Workers(database_url, tmp_path)
    try:
        automation = _prepare(database_url, settings)
        [victim] = workers.start(1)
        wait_until(lambda: _decided(database_url) >= 5, 60, f"decisions\n{workers.output()}")
        victim.send_signal(signal.SIGKILL)  # in the middle of its batch
        victim.wait(timeout=10)
        assert _decided(database_url) < RUNS, "the worker finished before it was killed"
        workers.start(1)
        wait_until(lambda: _decided(database_url) == RUNS, 120, f"the rest\n{workers.output()}")

        actor = f"automation:{automation}"
        per_run = query(
            database_url,
            "SELECT r.id, count(e.id) FILTER (WHERE e.kind = 'automation.comment') AS comments, "
            "count(e.id) FILTER (WHERE e.kind = 'automation.label') AS labels, "
            "count(e.id) FILTER (WHERE e.kind = 'slot.assigned') AS assigned "
            f"FROM run r LEFT JOIN audit_event e ON e.run = r.id AND e.actor = '{actor}' "
            "GROUP BY r.id",
        )
        assert len(per_run) == RUNS
        assert {(r["comments"], r["labels"], r["assigned"]) for r in per_run} == {(1, 1, 1)}
        held = query(database_url, "SELECT holder FROM slot WHERE name = 'finance_review'")
        assert {h["holder"] for h in held} == {"fiona"}
        outcomes = query(
            database_url, "SELECT outcome, count(*) AS n FROM automation_act GROUP BY 1"
        )
        assert [(o["outcome"], o["n"]) for o in outcomes] == [("act", RUNS)]
    finally:
        workers.stop()


DELAYED: dict[str, Any] = {
    "name": "a word now, another after a delay",
    "trigger": {"on": "slot.opened", "slot": "finance_review"},
    "conditions": [{"op": ">", "args": [{"ref": "subject.amount"}, {"lit": 1000}]}],
    "actions": [
        {"do": "comment", "text": "now"},
        {"do": "delay", "minutes": 1},
        {"do": "comment", "text": "later"},
        {"do": "add_label", "label": "later"},
    ],
}


def _waiting(url: str) -> int:
    return int(query(url, "SELECT count(*) AS n FROM automation_pending")[0]["n"])


@pytest.mark.slow
def test_a_worker_killed_while_resuming_delayed_actions_leaves_each_done_once(
    database_url: str, settings: config.Settings, tmp_path: Path
) -> None:
    workers = Workers(database_url, tmp_path)
    try:
        automation = _prepare(database_url, settings, DELAYED)
        [first] = workers.start(1)
        wait_until(lambda: _waiting(database_url) == RUNS, 60, f"delays\n{workers.output()}")
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        # The minute passes at once: every delay is due.
        query(database_url, "UPDATE automation_pending SET due_at = now() RETURNING id")
        [victim] = workers.start(1)
        wait_until(lambda: _waiting(database_url) < RUNS - 5, 60, f"resumed\n{workers.output()}")
        victim.send_signal(signal.SIGKILL)  # in the middle of the delayed actions
        victim.wait(timeout=10)
        assert _waiting(database_url) > 0, "the worker finished before it was killed"
        workers.start(1)
        wait_until(lambda: _waiting(database_url) == 0, 120, f"the rest\n{workers.output()}")

        actor = f"automation:{automation}"
        per_run = query(
            database_url,
            "SELECT r.id, count(e.id) FILTER (WHERE e.details->>'text' = 'now') AS now, "
            "count(e.id) FILTER (WHERE e.details->>'text' = 'later') AS later, "
            "count(e.id) FILTER (WHERE e.kind = 'automation.label') AS labels "
            f"FROM run r LEFT JOIN audit_event e ON e.run = r.id AND e.actor = '{actor}' "
            "GROUP BY r.id",
        )
        assert len(per_run) == RUNS
        assert {(r["now"], r["later"], r["labels"]) for r in per_run} == {(1, 1, 1)}
    finally:
        workers.stop()


WIDENED = 5


@pytest.mark.slow
def test_a_worker_escalates_and_adds_candidates_as_the_automation(
    database_url: str, settings: config.Settings, tmp_path: Path
) -> None:
    """A ``taskflow worker`` process runs ``escalate`` and ``add_candidate`` (the timer
    batch's escalation and addCandidate's use case) as the automation, each once per run."""
    workers = Workers(database_url, tmp_path)
    try:
        automation = _prepare(database_url, settings, WIDEN, runs=WIDENED)
        workers.start(1)
        wait_until(lambda: _decided(database_url) == WIDENED, 60, f"acted\n{workers.output()}")
        lines = query(
            database_url,
            "SELECT e.kind, e.actor, e.details->>'added' AS added, "
            "e.details->>'automation' AS automation, e.details->>'enrolling_event' AS event "
            "FROM audit_event e WHERE e.kind IN ('slot.escalated', 'slot.candidate_added') "
            "ORDER BY e.run, e.id",
        )
        actor = f"automation:{automation}"
        assert [(x["kind"], x["added"]) for x in lines] == [
            ("slot.escalated", "role:finance-lead"),
            ("slot.candidate_added", "user:lee"),
        ] * WIDENED
        assert {(x["actor"], x["automation"], x["event"]) for x in lines} == {
            (actor, automation, "slot.opened")
        }
        slots = query(
            database_url,
            "SELECT audience, version FROM slot WHERE name = 'finance_review'",
        )
        assert len(slots) == WIDENED
        for slot in slots:
            assert {"role:finance", "role:finance-lead", "user:lee"} <= set(slot["audience"])
            assert slot["version"] == 3
    finally:
        workers.stop()
