"""Deadlines in the engine: clocks start, meet, pause in a held state, recompute; timers."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from taskflow import Slot, State, Workflow, business, milestone, reminder, who
from taskflow.core.clocks import clock_lines, clocks, deadlines, firing
from taskflow.core.definition import audience as au
from taskflow.core.definition import sla
from taskflow.core.runs import engine
from taskflow.core.runs.model import CANCELLED, CLAIMED, OPEN, SATISFIED, Outcome, SlotView
from taskflow.core.slots import slots as slot_moves
from taskflow.service.versions import definitions
from tests.unit.test_clocks import REGISTRY

CATALOG = definitions.load_from_env({})
SUPPORT = CATALOG.get("support-ticket")
TUESDAY_9 = datetime(2026, 12, 1, 9, tzinfo=UTC)
TICKET = {
    "reference": "T-1",
    "title": "Cannot export",
    "priority": "P2",
    "team": "billing-support",
    "customer_email": "ana@example.com",
}
AGENT = au.principal_keys({"id": "sasha", "roles": ["support"], "groups": ["billing-support"]})
TRIAGE = au.principal_keys({"id": "tess", "roles": ["support-triage"]})
HELPDESK = au.principal_keys({"id": "helpdesk", "roles": ["helpdesk-integration"]})


def ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"id-{next(counter)}"


class Ticket:
    """A support run driven through the engine, its slots kept as the store keeps them."""

    def __init__(self, subject: dict[str, Any] | None = None) -> None:
        self.new_id = ids()
        self.now = TUESDAY_9
        self.slots: dict[str, SlotView] = {}
        out = engine.start(
            SUPPORT,
            run_id="run-1",
            subject=subject or TICKET,
            now=self.now,
            actor="app",
            new_id=self.new_id,
        )
        self.run = out.run
        self.keep(out)

    def keep(self, out: Outcome) -> Outcome:
        self.run = out.run
        for view in (*out.created, *out.changed):
            self.slots[view.id] = view
        return out

    def named(self, name: str) -> SlotView:
        [found] = [s for s in self.slots.values() if s.name == name and s.live]
        return found

    def at(self, delta: timedelta) -> None:
        self.now += delta

    def deposit(self, name: str, data: dict[str, Any], keys: frozenset[str]) -> Outcome:
        slot = self.named(name)
        return self.keep(
            engine.deposit(
                SUPPORT,
                self.run,
                self.slots.values(),
                slot_id=slot.id,
                event=None,
                payload=data,
                actor="someone",
                actor_keys=keys,
                expected_version=None,
                now=self.now,
                new_id=self.new_id,
                on_behalf=True,
            )
        )

    def move(self, name: str, data: dict[str, Any]) -> Outcome:
        principal = {"id": "sasha", "roles": ["support"], "groups": ["billing-support"]}
        return self.keep(
            engine.move(
                SUPPORT,
                self.run,
                self.slots.values(),
                name=name,
                data=data,
                principal=principal,
                now=self.now,
                new_id=self.new_id,
            )
        )

    def due(self, name: str, milestone_kind: str) -> datetime | None:
        [clock] = [c for c in self.named(name).clocks if c.milestone == milestone_kind]
        return clocks.due_at(clock, clocks.calendar_of(REGISTRY, clock))


def triaged() -> Ticket:
    ticket = Ticket()
    ticket.at(timedelta(minutes=10))
    ticket.deposit("triage", {"priority": "P2", "category": "bug"}, TRIAGE)
    return ticket


def test_clocks_start_when_slots_open_and_are_met_on_claim_and_completion() -> None:
    ticket = Ticket()
    [triage_clock] = ticket.named("triage").clocks
    assert (triage_clock.milestone, triage_clock.started_at) == ("finished", TUESDAY_9)
    assert ticket.due("triage", "finished") == TUESDAY_9 + timedelta(minutes=30)
    ticket.at(timedelta(minutes=10))
    out = ticket.deposit("triage", {"priority": "P2", "category": "bug"}, TRIAGE)
    done = next(s for s in out.changed if s.name == "triage")
    assert done.status == SATISFIED
    assert done.clocks[0].met_at == ticket.now
    # The team's slots open at 09:10 with an assigned clock (30 min round the clock) and a
    # finished clock (P2: 4 business hours on uk-london).
    assert ticket.due("first_response", "assigned") == datetime(2026, 12, 1, 9, 40, tzinfo=UTC)
    assert ticket.due("first_response", "finished") == datetime(2026, 12, 1, 13, 10, tzinfo=UTC)
    claimed = slot_moves.claim(ticket.named("first_response"), "sasha", AGENT, ticket.now, None)
    claimed = deadlines.sync_clocks(SUPPORT, claimed, TICKET, ticket.now)
    assigned = next(c for c in claimed.clocks if c.milestone == "assigned")
    finished = next(c for c in claimed.clocks if c.milestone == "finished")
    assert (claimed.status, assigned.met_at, finished.met_at) == (CLAIMED, ticket.now, None)


def test_a_pausing_state_holds_the_slots_and_their_paused_clocks() -> None:
    ticket = triaged()
    first = ticket.named("first_response")
    ticket.at(timedelta(hours=1))  # 10:10: an hour of the four spent
    out = ticket.move("ask_customer", {"question": "A screenshot?"})
    assert ticket.run.state == "waiting_for_customer"
    held = ticket.slots[first.id]
    assert held.status == OPEN
    assert all(c.paused for c in held.clocks)
    assert "slot.held" in [e.kind for e in out.audit]
    assert ticket.named("customer_reply").status == OPEN
    ticket.at(timedelta(days=1))  # Wednesday 10:10: the customer answers
    out = ticket.deposit("customer_reply", {"reply": "here"}, HELPDESK)
    assert ticket.run.state == "open"
    back = ticket.slots[first.id]
    assert back.status == OPEN
    assert back.visit == ticket.run.visit
    assert not any(c.paused for c in back.clocks)
    assert "slot.resumed" in [e.kind for e in out.audit]
    assert not [s for s in out.created if s.name == "first_response"]  # the same slot, not anew
    # Three business hours were left: Wednesday 13:10 instead of Tuesday 13:10.
    assert ticket.due("first_response", "finished") == datetime(2026, 12, 2, 13, 10, tzinfo=UTC)


def test_leaving_a_pausing_state_elsewhere_cancels_what_it_held() -> None:
    ticket = triaged()
    ticket.move("ask_customer", {"question": "A screenshot?"})
    ticket.at(timedelta(days=7))
    out = ticket.keep(
        engine.goto(
            SUPPORT,
            ticket.run,
            ticket.slots.values(),
            target="closed",
            reason="after 7 real days: move to closed",
            now=ticket.now,
            actor=None,
            new_id=ticket.new_id,
        )
    )
    assert ticket.run.state == "closed"
    assert {s.name for s in out.changed if s.status == CANCELLED} == {
        "first_response",
        "resolution",
        "customer_reply",
    }


def test_a_subject_change_recomputes_budgets_and_keeps_the_time_spent() -> None:
    ticket = triaged()
    ticket.at(timedelta(hours=1))
    before = ticket.due("first_response", "finished")
    regraded = {**TICKET, "priority": "P1"}
    out = ticket.keep(
        engine.change_subject(
            SUPPORT,
            ticket.run,
            ticket.slots.values(),
            subject=regraded,
            now=ticket.now,
            actor="app",
            new_id=ticket.new_id,
        )
    )
    # P1: 1 hour round the clock, started at 09:10: due 10:10, which is now.
    after = ticket.due("first_response", "finished")
    assert (before, after) == (
        datetime(2026, 12, 1, 13, 10, tzinfo=UTC),
        datetime(2026, 12, 1, 10, 10, tzinfo=UTC),
    )
    lines = clock_lines.clock_audit(
        next(s for s in triaged().slots.values() if s.name == "first_response"),
        ticket.named("first_response"),
        REGISTRY,
        ticket.now,
        "app",
    )
    recomputed = [
        e for e in lines if e.kind == "clock.recomputed" and e.details["milestone"] == "finished"
    ]
    assert recomputed[0].details["old_due_at"] == "2026-12-01T13:10:00+00:00"
    assert recomputed[0].details["new_due_at"] == "2026-12-01T10:10:00+00:00"
    assert out.changed


def test_timers_breach_and_reminders_at_a_fraction_then_every_interval() -> None:
    ticket = triaged()
    slot = ticket.named("first_response")
    specs = {
        s.key.split(":", 1)[1]: s.due_at for s in deadlines.slot_timers(SUPPORT, slot, REGISTRY, {})
    }
    at = lambda h, m: datetime(2026, 12, 1, h, m, tzinfo=UTC)  # noqa: E731
    assert specs == {
        "breach:assigned": at(9, 40),
        "breach:finished": at(13, 10),
        "at_risk:assigned": datetime(2026, 12, 1, 9, 32, 30, tzinfo=UTC),  # 75 % of 30 min
        "at_risk:finished": at(12, 10),  # 75 % of 4 business hours
        "reminder:0": at(12, 10),  # 75 % of 4 business hours
        "reminder:1": at(13, 10),  # on breach
    }
    # The breach reminder repeats every 4 business hours: its second firing.
    again = deadlines.slot_timers(SUPPORT, slot, REGISTRY, {f"{slot.id}:reminder:1": 1})
    second = next(s for s in again if s.key.endswith("reminder:1"))
    assert second.due_at == datetime(2026, 12, 1, 17, 10, tzinfo=UTC)
    # The 75 % reminder fires once; paused clocks need no timers.
    once = deadlines.slot_timers(SUPPORT, slot, REGISTRY, {f"{slot.id}:reminder:0": 1})
    assert not [s for s in once if s.key.endswith("reminder:0")]
    assert deadlines.slot_timers(SUPPORT, deadlines.paused(slot, ticket.now), REGISTRY, {}) == []


class Capped(Workflow):
    name = "capped"
    tracks = "thing"
    calendar = "uk-london"
    only = State(
        initial=True,
        slots=[
            Slot(
                "work",
                candidates=who.role("staff"),
                milestones=[milestone.finished(within=business.hours(8))],
                reminders=[
                    reminder.after(
                        business.hours(1), every=business.hours(1), times=3, notify=who.holder()
                    ),
                    reminder.at(
                        0.5,
                        every=business.hours(1),
                        until=0.75,
                        escalate_to=who.role("lead"),
                        quiet_hours=True,
                    ),
                ],
            )
        ],
        then=[],
    )
    done = State(terminal=True)


def test_reminders_stop_after_n_times_or_at_their_until_bound() -> None:
    definition = Capped.definition
    assert definition is not None
    out = engine.start(definition, run_id="r", subject={}, now=TUESDAY_9, actor=None, new_id=ids())
    [slot] = out.created
    key = f"{slot.id}:reminder:"

    def due(index: int, fired: int) -> datetime | None:
        found = deadlines.slot_timers(definition, slot, REGISTRY, {f"{key}{index}": fired})
        return next((s.due_at for s in found if s.key == f"{key}{index}"), None)

    assert [due(0, n) for n in range(4)] == [
        datetime(2026, 12, 1, h, tzinfo=UTC) for h in (10, 11, 12)
    ] + [None]
    # 50 % of 8 h = 4 h (13:00), then hourly until 75 % (6 h, 15:00).
    assert [due(1, n) for n in range(4)] == [
        datetime(2026, 12, 1, h, tzinfo=UTC) for h in (13, 14, 15)
    ] + [None]


def test_firing_escalates_reassigns_and_raises_priority() -> None:
    ticket = triaged()
    slot = ticket.named("first_response")
    team_lead = who.role("support-lead") & who.group("billing-support")
    actions = sla.actions(
        escalate_to=team_lead,
        raise_priority_to=1,
        notify=who.holder() | who.group("billing-support"),
    )
    decl = SUPPORT.slot("open", "first_response")
    result = firing.effects(ticket.run, slot, decl, actions, message="late", now=ticket.now)
    assert result.slot is not None
    tara = au.principal_keys(
        {"id": "tara", "roles": ["support", "support-lead"], "groups": ["billing-support"]}
    )
    other_lead = au.principal_keys({"id": "x", "roles": ["support-lead"], "groups": ["other"]})
    assert result.slot.audience.admits(tara)
    assert result.slot.audience.admits(AGENT)
    assert not result.slot.audience.admits(other_lead)
    assert result.slot.priority == 1
    assert result.slot.version == slot.version + 1
    assert [e.kind for e in result.audit] == ["slot.escalated", "slot.priority_raised"]
    [notice] = result.notices
    assert notice.audience.admits(AGENT)
    assert not notice.audience.admits(TRIAGE)
    reassigned = firing.effects(
        ticket.run,
        slot,
        decl,
        sla.actions(reassign_to=who.id("tara")),
        message="late",
        now=ticket.now,
    )
    assert reassigned.slot is not None
    assert (reassigned.slot.status, reassigned.slot.holder) == (CLAIMED, "tara")


def test_quiet_hours_deliver_at_the_next_opening_of_the_recipients_calendar() -> None:
    berlin = REGISTRY.get("de-berlin")
    friday_night = datetime(2026, 12, 4, 21, tzinfo=UTC)
    assert deadlines.deliver_at(berlin, friday_night) == berlin.next_open(friday_night)
    assert deadlines.deliver_at(berlin, friday_night).weekday() == 0  # Monday morning
    tuesday_morning = datetime(2026, 12, 1, 9, tzinfo=UTC)
    assert deadlines.deliver_at(berlin, tuesday_morning) == tuesday_morning
    assert deadlines.deliver_at(None, friday_night) == friday_night


def test_the_at_risk_share_is_a_setting() -> None:
    from taskflow import errors
    from taskflow.config import config

    env = {"TASKFLOW_DATABASE_URL": "postgresql://db/", "TASKFLOW_SECRET_KEYS": "k" * 40}
    assert config.load(env).sla_at_risk == 0.75
    assert config.load({**env, "TASKFLOW_SLA_AT_RISK": "0.8"}).sla_at_risk == 0.8
    for bad in ("80%", "0", "1.5"):
        with pytest.raises(errors.ConfigError, match="TASKFLOW_SLA_AT_RISK"):
            config.load({**env, "TASKFLOW_SLA_AT_RISK": bad})
    ticket = triaged()
    slot = ticket.named("first_response")
    [finished] = [c for c in slot.clocks if c.milestone == "finished"]
    at_noon = ticket.now + timedelta(hours=3)  # 3 of 4 hours spent: 75 %
    reading = sla_reading(finished, at_noon, 0.8)
    assert reading.status == "running"
    assert sla_reading(finished, at_noon, 0.75).status == "at_risk"


def sla_reading(clock: clocks.Clock, now: datetime, share: float) -> Any:
    from taskflow.service.clocks import deadlines as service

    return service.read(REGISTRY, clock, now, share)
