"""The forecast watch on the demo's history with a moved clock: ``clock.forecast_at_risk``
once per slot as its forecast reaches the alert threshold, not again until it fell below
and rose again; the batch is bounded; the line reaches the webhook outbox and automations'
trigger catalog (docs/forecast.md, "The at-risk event")."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import pytest

from taskflow import clock
from taskflow.cli import forecast_cmd
from taskflow.cli.demo_cmd import PRINCIPALS, RUNS
from taskflow.service.common.container import Services
from taskflow.service.delivery import webhooks
from taskflow.service.operate import demo
from taskflow.service.reports import forecast, forecast_watch
from taskflow.service.versions import definitions
from tests.conftest import with_settings

pytestmark = pytest.mark.anyio


async def _demo(services: Services) -> None:
    records, data = demo.read(PRINCIPALS, RUNS)
    await demo.seed(services, records, data)


async def _lines(services: Services) -> list[tuple[str, str, dict[str, Any]]]:
    async with services.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT slot, reason, details FROM audit_event WHERE kind = 'clock.forecast_at_risk'"
            " ORDER BY id"
        )
    return [(str(r["slot"]), r["reason"], r["details"]) for r in rows]


async def _evaluated(services: Services) -> dict[str, object]:
    async with services.db.connection() as conn:
        rows = await conn.fetch("SELECT slot, evaluated_at FROM slot_forecast")
    return {str(r["slot"]): r["evaluated_at"] for r in rows}


async def test_the_line_is_written_once_until_the_forecast_falls_below_and_rises_again(
    services: Services, frozen_clock: clock.FrozenClock
) -> None:
    await _demo(services)
    # Someone listens for the event: the outbox trigger copies each line for them.
    await webhooks.create(
        services,
        forecast_cmd.OPERATOR,
        url="https://93.184.216.34/hooks",
        description="forecast alerts",
        event_types=["clock.forecast_at_risk"],
        workflows=[],
    )
    now = frozen_clock.now()
    async with services.db.connection() as conn:
        live = [
            str(r["id"])
            for r in await conn.fetch("SELECT id FROM slot WHERE status IN ('open', 'claimed')")
        ]
    risks = await forecast.breach_risks(services, live, now)
    # Short of the clock's own at-risk share (75 %), with a probability: the watched ones.
    watched = {
        i: r.probability
        for i, r in risks.items()
        if r.probability is not None and r.share_elapsed < 0.75
    }
    up = {i for i, p in watched.items() if p >= 0.5}
    assert len(up) >= 3, "the demo leaves slots whose forecast reaches 50 %"

    assert set(await forecast_watch.watch(services, now, threshold=0.5)) == up
    lines = await _lines(services)
    assert sorted(slot for slot, _, _ in lines) == sorted(up)
    for slot, reason, details in lines:
        assert reason.startswith(f"breach forecast {watched[slot] * 100:.0f} % reached 50 %: ")
        assert details["threshold"] == 0.5
        assert details["probability"] == pytest.approx(watched[slot], abs=1e-4)
    async with services.db.connection() as conn:
        events = await conn.fetch(
            "SELECT type, details FROM outbox_event WHERE type = 'clock.forecast_at_risk'"
        )
    assert len(events) == len(up)

    # A second pass, a minute on: still at risk, nothing new is said.
    frozen_clock.advance(timedelta(minutes=1))
    assert await forecast_watch.watch(services, frozen_clock.now(), threshold=0.5) == []
    assert len(await _lines(services)) == len(up)

    # The bar moves up to 65 %: the slots below it fall (quietly), the others stay flagged.
    frozen_clock.advance(timedelta(minutes=1))
    assert await forecast_watch.watch(services, frozen_clock.now(), threshold=0.65) == []
    fell = {i for i in up if watched[i] < 0.65}
    assert fell, "some forecasts lie between 50 % and 65 %"
    # Back to 50 %: those that fell rise again, a second line each; the others say nothing.
    frozen_clock.advance(timedelta(minutes=1))
    again = await forecast_watch.watch(services, frozen_clock.now(), threshold=0.5)
    assert set(again) == {i for i in fell if risks[i].share_elapsed < 0.75}
    assert len(await _lines(services)) == len(up) + len(again)


async def test_a_pass_reads_a_bounded_batch_least_recently_forecast_first(
    services: Services, frozen_clock: clock.FrozenClock
) -> None:
    await _demo(services)
    first = frozen_clock.now()
    await forecast_watch.watch(services, first, size=3)
    after_first = await _evaluated(services)
    assert len(after_first) == 3
    frozen_clock.advance(timedelta(minutes=5))
    await forecast_watch.watch(services, frozen_clock.now(), size=3)
    after_second = await _evaluated(services)
    # Three more, none of the first three: they were forecast most recently.
    assert len(after_second) == 6
    assert all(after_second[i] == first for i in after_first)


async def test_the_worker_runs_the_watch_on_its_clock_every_five_minutes(
    services: Services, frozen_clock: clock.FrozenClock
) -> None:

    from taskflow.worker import loop

    await _demo(services)
    # An alert bar the demo's live work reaches (0.7 by default: TASKFLOW_FORECAST_ALERT).
    alerting = with_settings(services, forecast_alert=0.5)
    async with loop.running(alerting, poll=0.05, scheduler="poll") as worker:
        await worker.passes_done(2)
        written = await _lines(services)
        assert written, "the first pass forecast the live slots and flagged some"
        assert worker.forecast_alerts == len(written)
        evaluated = await _evaluated(services)
        # Later passes within five minutes read nothing again.
        await worker.passes_done(worker.passes + 2)
        assert await _evaluated(services) == evaluated
        # Five minutes on, the next pass reads them again (at the new instant).
        frozen_clock.advance(forecast_watch.EVERY)
        await worker.passes_done(worker.passes + 2)
        assert set((await _evaluated(services)).values()) == {frozen_clock.now()}
        assert len(await _lines(services)) == len(written)


async def test_an_automation_on_the_event_acts_on_each_flagged_slot_once(
    services: Services, frozen_clock: clock.FrozenClock
) -> None:
    from taskflow.service.access import principals as principal_service
    from taskflow.service.automations import acting, automations

    await _demo(services)
    admin = await principal_service.get(services, "ada")
    assert admin is not None
    document = {
        "name": "likely breaches get a note",
        "trigger": {"on": "clock.forecast_at_risk"},
        "conditions": [{"op": ">=", "args": [{"ref": "event.probability"}, {"lit": 0.5}]}],
        "actions": [{"do": "comment", "text": "The forecast says this one is likely to breach."}],
    }
    automation = await automations.create(services, admin, "support-ticket", document)
    await automations.move(services, admin, automation, "publish")
    frozen_clock.advance(timedelta(seconds=1))

    risen = await forecast_watch.watch(services, frozen_clock.now(), threshold=0.5)
    async with services.db.connection() as conn:
        runs = {
            str(r["run"])
            for r in await conn.fetch(
                "SELECT run FROM slot WHERE id = ANY($1::uuid[]) AND workflow = 'support-ticket'",
                risen,
            )
        }
    assert runs, "the demo's support tickets have slots the forecast flags"
    assert await acting.run_due(services) >= len(runs)
    assert await acting.run_due(services) == 0  # decided: never again
    async with services.db.connection() as conn:
        acted = {
            str(r["run"])
            for r in await conn.fetch(
                "SELECT run FROM audit_event WHERE actor = $1", f"automation:{automation}"
            )
        }
    assert acted == runs


async def test_two_passes_at_once_write_each_line_once(
    services: Services, frozen_clock: clock.FrozenClock
) -> None:
    import asyncio

    await _demo(services)
    now = frozen_clock.now()
    first, second = await asyncio.gather(
        forecast_watch.watch(services, now, threshold=0.5),
        forecast_watch.watch(services, now, threshold=0.5),
    )
    assert first or second
    assert not set(first) & set(second)  # the second pass read the flags the first set
    lines = await _lines(services)
    assert sorted(slot for slot, _, _ in lines) == sorted([*first, *second])


def _with_alert(
    catalog: definitions.Catalog, where: tuple[str, int, str, str, str], alert: float
) -> definitions.Catalog:
    """``catalog`` with one milestone (workflow, version, state, slot, kind) alerting at
    ``alert``, as if its definition said ``milestone.<kind>(..., forecast_alert=alert)``."""
    name, version, state_name, slot_name, kind = where
    chosen = catalog.get(name, version)
    state = chosen.state(state_name)
    slot = state.slot(slot_name)
    milestones = tuple(
        dataclasses.replace(m, forecast_alert=alert) if m.kind == kind else m
        for m in slot.milestones
    )
    slot = dataclasses.replace(slot, milestones=milestones)
    state = dataclasses.replace(
        state, slots=tuple(slot if s.name == slot_name else s for s in state.slots)
    )
    chosen = dataclasses.replace(
        chosen, states=tuple(state if s.name == state_name else s for s in chosen.states)
    )
    return definitions.Catalog([chosen if d.key == chosen.key else d for d in catalog])


async def test_a_milestones_own_threshold_decides_for_its_slots(
    services: Services, frozen_clock: clock.FrozenClock
) -> None:
    """One milestone alerts at 50 %, the rest at the setting's 70 %: a pass flags that
    milestone's slots from 50 % and the others from 70 %, each line naming its threshold;
    minutes later, still flagged, nothing more is said."""
    await _demo(services)
    now = frozen_clock.now()
    async with services.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT s.id, s.workflow, r.definition_version, s.state, s.name, s.sla_milestone"
            " FROM slot s JOIN run r ON r.id = s.run WHERE s.status IN ('open', 'claimed')"
        )
    where = {
        str(r["id"]): (
            r["workflow"],
            r["definition_version"],
            r["state"],
            r["name"],
            r["sla_milestone"],
        )
        for r in rows
    }
    risks = await forecast.breach_risks(services, list(where), now)
    watched = {
        i: r.probability
        for i, r in risks.items()
        if r.probability is not None and r.share_elapsed < 0.75
    }
    # A milestone with a slot between 50 % and the setting's 70 %: its own bar flags it.
    between = sorted(where[i] for i, p in watched.items() if 0.5 <= p < 0.7)
    assert between, "the demo leaves a slot whose forecast lies between 50 % and 70 %"
    lowered = between[0]
    assert services.settings.forecast_alert == 0.7
    alerting = dataclasses.replace(services, catalog=_with_alert(services.catalog, lowered, 0.5))

    risen = await forecast_watch.watch(alerting, now)
    bar = {i: 0.5 if where[i] == lowered else 0.7 for i in watched}
    assert set(risen) == {i for i, p in watched.items() if p >= bar[i]}
    assert {i for i in risen if where[i] == lowered}, "the lowered milestone's slot is flagged"
    for slot, reason, details in await _lines(services):
        assert details["threshold"] == bar[slot]
        assert f"reached {bar[slot] * 100:.0f} %: " in reason

    # Five minutes on, the clock moved: the flags stand, nothing more is said.
    frozen_clock.advance(forecast_watch.EVERY)
    assert await forecast_watch.watch(alerting, frozen_clock.now()) == []
    assert len(await _lines(services)) == len(risen)
