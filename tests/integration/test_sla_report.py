"""The SLA report's numbers on the hand-built data set (tests/reports_dataset.py)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from taskflow.core.access.principals import Grant, Principal
from taskflow.core.reports import reports
from taskflow.service.common.container import Services
from taskflow.service.reports import reports as report_service
from tests import reports_dataset as ds

pytestmark = pytest.mark.anyio
H = ds.H
MANAGER = Principal(id="max", display_name="Max", roles=("manager",), powers=(Grant("manager"),))


async def run(services: Services, *group_by: str, **options: object) -> list[reports.ReportRow]:
    request = reports.ReportRequest(ds.FROM, ds.TO, tuple(group_by), **options)  # type: ignore[arg-type]
    return await report_service.sla_report(services, MANAGER, request)


def hours(p: reports.Percentiles) -> tuple[float | None, ...]:
    return tuple(None if v is None else round(v / H, 6) for v in (p.p50, p.p90, p.p95))


async def test_totals(services: Services, loaded: dict[str, str]) -> None:
    [row] = await run(services)
    assert (row.opened, row.met, row.breached, row.still_open) == (6, 2, 2, 2)
    assert (row.at_risk_now, row.breached_now) == (1, 1)
    assert row.breach_rate == 0.5
    # Pickup, business: S2 0.5, S4 0.5, S6 1.5 (Berlin), S1 2.5, S5 5 - 2 paused = 3.
    assert hours(row.pickup_business) == (1.5, 2.8, 2.9)
    # Real: 0.5, 0.5, 2.5, 3, 18.
    assert hours(row.pickup_real) == (2.5, 12.0, 15.0)
    # Completion, business: S5 3, S6 4, S1 4.5, S2 8.5 (real-time clock: the workflow's calendar).
    assert hours(row.completion_business) == (4.25, 7.3, 7.9)
    assert hours(row.completion_real) == (12.5, 22.8, 23.4)
    # Lead 20 + 24 + 88 + 18 + 5 + 5; held 2 + 22.5 + 0 + 17.5 + 0 + 2.5.
    assert (row.lead_us, row.worked_us, row.waiting_us) == (160 * H, 44.5 * H, 115.5 * H)


async def test_assigned_milestone(services: Services, loaded: dict[str, str]) -> None:
    [row] = await run(services, milestone="assigned")
    assert (row.opened, row.met, row.breached, row.breach_rate) == (1, 0, 1, 1.0)
    assert hours(row.pickup_business) == (2.5, 2.5, 2.5)


async def test_every_grouping(services: Services, loaded: dict[str, str]) -> None:
    def counts(rows: list[reports.ReportRow], key: str) -> dict[object, tuple[int, ...]]:
        return {
            getattr(r, key): (r.opened, r.met, r.breached, r.still_open, r.at_risk_now)
            for r in rows
        }

    assert counts(await run(services, "workflow"), "workflow") == {
        ds.EXPENSE: (5, 2, 2, 2, 1),
        ds.VENDOR: (1, 0, 0, 0, 0),
    }
    assert counts(await run(services, "state"), "state") == {
        "collecting": (1, 0, 0, 0, 0),
        "manager_approval": (2, 0, 1, 2, 1),
        "payment": (1, 1, 0, 0, 0),
        "submitted": (2, 1, 1, 0, 0),
    }
    assert counts(await run(services, "slot"), "slot") == {
        "finance_review": (2, 1, 1, 0, 0),
        "legal_review": (1, 0, 0, 0, 0),
        "manager_approval": (2, 0, 1, 2, 1),
        "payment": (1, 1, 0, 0, 0),
    }
    # user: keys are not teams; a slot counts once in each of its roles and groups.
    assert counts(await run(services, "audience"), "audience") == {
        "group:emea": (2, 0, 1, 2, 1),
        "role:finance": (5, 2, 2, 2, 1),
        "role:procurement": (1, 0, 0, 0, 0),
    }
    assert counts(await run(services, "holder"), "holder") == {
        "fiona": (2, 1, 1, 0, 0),
        "frank": (2, 1, 0, 1, 1),
        "olga": (1, 0, 0, 0, 0),
        None: (1, 0, 1, 1, 0),
    }
    assert counts(await run(services, "priority"), "priority") == {
        1: (1, 0, 1, 1, 0),
        2: (2, 1, 1, 0, 0),
        3: (3, 1, 0, 1, 1),
    }
    by_two = await run(services, "workflow", "priority")
    assert [(r.workflow, r.priority, r.opened) for r in by_two] == [
        (ds.EXPENSE, 1, 1),
        (ds.EXPENSE, 2, 2),
        (ds.EXPENSE, 3, 2),
        (ds.VENDOR, 3, 1),
    ]


async def test_periods_include_empty_ones(services: Services, loaded: dict[str, str]) -> None:
    days = await run(services, "period", period="day", zone="uk-london")
    assert [(r.period_start, r.opened) for r in days] == [
        (datetime(2026, 11, d, tzinfo=UTC), n)
        for d, n in [(23, 1), (24, 1), (25, 2), (26, 0), (27, 1), (28, 0), (29, 0), (30, 1)]
    ] + [(datetime(2026, 12, 1, tzinfo=UTC), 0)]
    empty = days[3]
    assert (empty.met, empty.breach_rate, empty.pickup_business.p50) == (0, None, None)
    weeks = await run(services, "period", period="week")
    assert [(r.period_start, r.opened) for r in weeks] == [
        (datetime(2026, 11, 23, tzinfo=UTC), 5),
        (datetime(2026, 11, 30, tzinfo=UTC), 1),
    ]
    months = await run(services, "period", "workflow", period="month")
    assert [(r.period_start, r.workflow, r.opened) for r in months] == [
        (datetime(2026, 11, 1, tzinfo=UTC), ds.EXPENSE, 5),
        (datetime(2026, 11, 1, tzinfo=UTC), ds.VENDOR, 1),
        (datetime(2026, 12, 1, tzinfo=UTC), ds.EXPENSE, 0),
        (datetime(2026, 12, 1, tzinfo=UTC), ds.VENDOR, 0),
    ]


async def test_every_period_for_every_group_a_null_key_included(
    services: Services, loaded: dict[str, str]
) -> None:
    weeks = await run(services, "period", "holder", period="week")
    holders = ["fiona", "frank", "olga", None]
    assert [(r.period_start, r.holder) for r in weeks] == [
        (datetime(2026, 11, d, tzinfo=UTC), h) for d in (23, 30) for h in holders
    ]
    # The grid's rows add up to the holder grouping's, the slot nobody holds included.
    totals = {h: sum(r.opened for r in weeks if r.holder == h) for h in holders}
    assert totals == {"fiona": 2, "frank": 2, "olga": 1, None: 1}
    # Frank's second slot opened in the second week; empty cells are zeros.
    assert [r.opened for r in weeks] == [2, 1, 1, 1, 0, 1, 0, 0]


async def test_periods_are_cut_in_the_zone_asked(
    services: Services, loaded: dict[str, str]
) -> None:
    # Auckland is UTC+13 in November: S1 (Mon 16:00Z) opens on Tuesday there, S4 on 1 December.
    days = await run(services, "period", period="day", zone="Pacific/Auckland")
    assert [(r.period_start.astimezone(UTC), r.opened) for r in days if r.period_start] == [
        (datetime(2026, 11, d, 11, tzinfo=UTC), n)
        for d, n in [(22, 0), (23, 2), (24, 2), (25, 0), (26, 0), (27, 1), (28, 0), (29, 0)]
    ] + [(datetime(2026, 11, 30, 11, tzinfo=UTC), 1)]


async def test_filter(services: Services, loaded: dict[str, str]) -> None:
    [row] = await run(
        services, filter=reports.ReportFilter(workflow=ds.EXPENSE, audience=("group:emea",))
    )
    assert (row.opened, row.breached_now, row.at_risk_now) == (2, 1, 1)


async def test_staff_are_refused(services: Services, loaded: dict[str, str]) -> None:
    from taskflow import errors

    staff = Principal(id="fiona", display_name="Fiona", roles=("finance",))
    with pytest.raises(errors.Forbidden):
        await report_service.sla_report(services, staff, reports.ReportRequest(ds.FROM, ds.TO))


async def test_run_lead_time(services: Services, loaded: dict[str, str]) -> None:
    lead = await report_service.run_lead_time(services, loaded["run:S2"])
    # The data set gives runs no end instant, so S2's run counts to now (Wed 25 -> Tue 1 09:00);
    # held: 09:30-10:00 and 11:00 -> Thu 09:00.
    assert (lead.total_us, lead.worked_us) == (6 * 24 * H, 22.5 * H)
    assert [(s.state, s.total_us, s.worked_us) for s in lead.states] == [
        ("submitted", 6 * 24 * H, 22.5 * H)
    ]


async def test_stored_measures_give_the_same_report(
    services: Services, loaded: dict[str, str]
) -> None:
    # The data set has no stored measures: every slot is measured on read. Storing them
    # (as the write path does when a slot ends) must not move a single number.
    requests: list[tuple[tuple[str, ...], dict[str, object]]] = [
        ((), {}),
        ((), {"milestone": "assigned"}),
        ((), {"milestone": "finished"}),
        (("period", "audience"), {"period": "day", "zone": "uk-london"}),
        (("workflow", "holder", "priority"), {}),
        (("state", "slot"), {"filter": reports.ReportFilter(workflow=ds.EXPENSE)}),
    ]
    on_read = [await run(services, *g, **o) for g, o in requests]
    # Four ended slots, and the live S4's time to pickup (claimed before it was kept).
    assert await report_service.measure_ended_slots(services) == 5
    assert await report_service.measure_ended_slots(services) == 0
    stored = [await run(services, *g, **o) for g, o in requests]
    assert stored == on_read
    async with services.db.connection() as conn:
        kept = await conn.fetchrow(
            "SELECT pickup_clock, pickup_biz_us, pickup_real_us FROM slot WHERE id = $1",
            uuid.UUID(loaded["S4"]),
        )
        # Opened Monday 15:00, claimed 15:30: half an hour either way.
        assert tuple(kept) == ("finished", 0.5 * H, 0.5 * H)
        measured = await conn.fetch(
            "SELECT name, measured_clock, pickup_biz_us, worked_us, clock_met, breach_from "
            "FROM slot WHERE measured_clock IS NOT NULL ORDER BY opened_at"
        )
    # S1 (finished clock met in time), S5 (paused 2 h), S2 (real-time clock met late), S6.
    assert [(r["measured_clock"], r["pickup_biz_us"], r["worked_us"]) for r in measured] == [
        ("finished", 2.5 * H, 2 * H),
        ("finished", 3 * H, 0),
        ("finished", 0.5 * H, 22.5 * H),
        ("", 1.5 * H, 2.5 * H),
    ]
    assert [r["clock_met"] for r in measured] == [True, True, True, False]
    assert [r["breach_from"] for r in measured] == [None, None, ds.at(25, 13), None]
