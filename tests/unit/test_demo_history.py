"""The demo's history plan (``service.demo.history``): past runs at past instants."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from taskflow.cli.demo_cmd import PRINCIPALS, RUNS
from taskflow.service.operate import demo

NOW = datetime(2026, 12, 1, 13, 20, tzinfo=UTC)
LONDON = ZoneInfo("Europe/London")


def plan(now: datetime = NOW) -> list[demo.PastRun]:
    _, data = demo.read(PRINCIPALS, RUNS)
    return demo.history(data, now)


def test_the_plan_is_the_same_every_time() -> None:
    assert plan() == plan()
    ids = [p.spec["external_id"] for p in plan()]
    assert len(ids) == len(set(ids)) == 92


def test_runs_start_in_working_hours_of_the_last_five_weeks_and_steps_follow_in_order() -> None:
    for past in plan():
        local = past.started_at.astimezone(LONDON)
        assert local.weekday() < 5, past.spec["external_id"]
        assert 8 <= local.hour < 17, past.spec["external_id"]
        assert NOW - timedelta(weeks=5, days=3) <= past.started_at < NOW
        instants = [past.started_at, *(when for when, _ in past.steps)]
        assert instants == sorted(instants)
        assert all(when < NOW for when, _ in past.steps)
        assert all(step["as"] for _, step in past.steps)


def test_only_steps_due_before_now_are_played_so_recent_runs_stay_live() -> None:
    planned = {p.spec["external_id"]: p for p in plan()}
    # The backlog templates never get past their first step.
    backlog = [p for i, p in planned.items() if i.startswith(("T-8", "EXP-2026-W"))]
    assert len(backlog) == 10
    assert all(len(p.steps) <= 1 for p in backlog)
    # Of the others, most ended long ago; a few started lately are still under way.
    steps = {"EXP-2026-H": 3, "EXP-2026-L": 5, "T-7": 5}
    under_way = [
        i
        for i, p in planned.items()
        for prefix, n in steps.items()
        if i.startswith(prefix) and len(p.steps) < n
    ]
    assert 0 < len(under_way) < 10, under_way


def test_numbers_and_dates_fill_in() -> None:
    past = next(p for p in plan() if p.spec["external_id"] == "EXP-2026-H001")
    assert past.spec["attributes"]["reference"] == "EXP-2026-H001"
    payments = [step for _, step in past.steps if step.get("complete") == "payment"]
    for step in payments:
        assert step["payload"]["payment_reference"] == "PAY-H001"
        assert len(step["payload"]["paid_on"]) == 10  # an ISO date
