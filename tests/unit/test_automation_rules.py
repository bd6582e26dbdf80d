"""Automation documents: validated with JSON pointers, decided per event, simulated."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from taskflow.config import config
from taskflow.core.access import access, principals
from taskflow.core.automations import decide as d
from taskflow.core.automations import document, simulate, timeline
from taskflow.core.automations.document import Automation, Problem

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)
EXAMPLE = config.PROJECT_ROOT / "examples" / "automations" / "escalate_p1_automation.json"


def example() -> dict[str, Any]:
    return json.loads(EXAMPLE.read_text())


def rule(doc: dict[str, Any]) -> Automation:
    got = document.read(doc)
    assert isinstance(got, Automation), got
    return got


def problems(doc: Any) -> list[tuple[str, str]]:
    got = document.read(doc)
    assert isinstance(got, list), got
    return [(p.pointer, p.code) for p in got]


def at_risk(
    n: int, *, priority: str = "P1", hours: float = 0, run: str = "r1", depth: int = 0
) -> d.Event:
    return d.Event(
        id=f"e{n}",
        kind="clock.at_risk",
        at=T0 + timedelta(hours=hours),
        run_id=run,
        subject={"priority": priority},
        depth=depth,
    )


def test_the_example_reads_and_escalates_p1_only() -> None:
    r = rule(example())
    seen = d.Enrollments()
    acted = d.decide(r, at_risk(1), seen)
    assert acted.acts
    assert [a.verb for a in acted.actions] == ["escalate", "notify", "add_label"]
    skipped = d.decide(r, at_risk(2, priority="P3", run="r2"), seen)
    assert skipped.outcome == "skip"
    assert 'subject.priority == "P1"' in skipped.reason


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"trigger": {"on": "slot.exploded"}}, [("/trigger/on", "unknown_trigger")]),
        ({"trigger": {"on": "slot.opened", "state": "x"}}, [("/trigger/state", "bad_filter")]),
        ({"actions": [{"do": "rm -rf"}]}, [("/actions/0/do", "unknown_action")]),
        ({"actions": [{"do": "notify", "to": "role:x"}]}, [("/actions/0/message", "missing")]),
        ({"actions": [{"do": "assign", "to": ["a"]}]}, [("/actions/0/to", "wrong_type")]),
        (
            {"actions": [{"do": "assign", "to": "user:a", "sudo": "1"}]},
            [("/actions/0/sudo", "unknown_key")],
        ),
        ({"actions": []}, [("/actions", "bad_actions")]),
        ({"conditions": [{"op": "~~", "args": []}]}, [("/conditions/0", "bad_expression")]),
        ({"conditions": [{"ref": "payload.x"}]}, [("/conditions/0", "bad_reference")]),
        ({"conditions": [{"ref": "secrets.x"}]}, [("/conditions/0", "bad_expression")]),
        ({"conditions": [{"ref": "principal.id"}]}, [("/conditions/0", "bad_reference")]),
        (
            {"enrollment": {"policy": "once_per_window"}},
            [("/enrollment/window_hours", "bad_window")],
        ),
        ({"enrollment": {"policy": "sometimes"}}, [("/enrollment/policy", "bad_policy")]),
        ({"name": ""}, [("/name", "bad_name")]),
        ({"owner": "root"}, [("/owner", "unknown_key")]),
    ],
)
def test_bad_parts_are_named_by_pointer(
    change: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert problems({**example(), **change}) == expected


def test_hostile_documents_are_refused_not_crashed() -> None:
    assert problems([1, 2]) == [("", "not_an_object")]
    deep: Any = {"lit": 1}
    for _ in range(10_000):
        deep = {"op": "not", "args": [deep]}
    assert problems({**example(), "conditions": [deep]}) == [("/conditions/0", "too_large")]
    many = [{"do": "add_label", "label": "x"}] * 10_000
    assert problems({**example(), "actions": many}) == [("/actions", "bad_actions")]


def test_a_rule_raising_the_event_it_listens_to_is_a_loop() -> None:
    doc = {
        **example(),
        "trigger": {"on": "event.raised", "event": "poke"},
        "actions": [{"do": "comment", "text": "hi"}, {"do": "raise_event", "event": "poke"}],
    }
    assert problems(doc) == [("/actions/1/event", "loop")]
    ok = {**doc, "actions": [{"do": "raise_event", "event": "other"}]}
    assert rule(ok).trigger == "event.raised"


def test_events_too_many_automation_hops_deep_are_stopped_and_flagged() -> None:
    r = rule({**example(), "enrollment": {"policy": "every_time"}})
    seen = d.Enrollments()
    assert d.decide(r, at_risk(1, depth=d.MAX_DEPTH - 1), seen).acts
    stopped = d.decide(r, at_risk(2, depth=d.MAX_DEPTH), seen)
    assert stopped.outcome == "loop"
    assert not stopped.actions


def test_conditions_read_the_event_and_trigger_filters_narrow() -> None:
    r = rule(
        {
            "name": "big orders",
            "trigger": {"on": "slot.opened", "slot": "approve"},
            "conditions": [{"op": ">", "args": [{"ref": "event.amount"}, {"lit": 100}]}],
            "actions": [{"do": "add_candidate", "to": "role:finance"}],
        }
    )

    def opened(slot: str, amount: int) -> d.Event:
        return d.Event("e", "slot.opened", T0, "r", facts={"slot": slot, "amount": amount})

    assert d.decide(r, opened("approve", 500), d.Enrollments()).acts
    assert not d.decide(r, opened("approve", 50), d.Enrollments()).acts
    assert not d.decide(r, opened("review", 500), d.Enrollments()).acts


@pytest.mark.parametrize(
    ("policy", "acted_hours"),
    [
        ({"policy": "every_time"}, [0, 1, 30]),
        ({"policy": "once_per_subject"}, [0]),
        ({"policy": "once_per_window", "window_hours": 24}, [0, 30]),
    ],
)
def test_enrollment_policies_in_a_simulation(
    policy: dict[str, Any], acted_hours: list[int]
) -> None:
    r = rule({**example(), "enrollment": policy})
    events = [at_risk(1, hours=0), at_risk(2, hours=1), at_risk(3, hours=30)]
    sim = simulate.simulate(r, events)
    assert [s.event.at - T0 for s in sim.would_act] == [timedelta(hours=h) for h in acted_hours]
    assert sim.events_read == 3
    assert sim.capped == ""


def test_simulation_is_capped() -> None:
    r = rule(example())
    year = (at_risk(n, hours=n / 60, run=f"r{n}") for n in range(60 * 24 * 366))
    sim = simulate.simulate(r, year)
    assert sim.capped == f"stopped after {simulate.MAX_EVENTS} events"
    assert sim.events_read == simulate.MAX_EVENTS
    sparse = (at_risk(n, hours=n * 48, run=f"r{n}") for n in range(366))
    assert (
        simulate.simulate(r, sparse).capped == f"stopped after {simulate.MAX_DAYS} days of events"
    )


def test_actor_and_once_key() -> None:
    assert d.actor_id("a1") == "automation:a1"
    assert d.once_key("a1", 2, "e9") == "automation:a1:v2:event:e9"
    assert Problem("/x", "c", "m").pointer == "/x"


def test_leads_granted_the_whole_workflow_manage_its_automations() -> None:
    def person(**data: object) -> principals.Principal:
        return principals.build({"id": "p", "display_name": "P", **data})

    lead = person(powers=[{"power": "lead", "workflows": ["support-ticket"]}])
    team_lead = person(
        powers=[{"power": "lead", "workflows": ["support-ticket"], "teams": ["group:t1"]}]
    )
    manager = person(powers=[{"power": "manager", "workflows": ["support-ticket"]}])
    admin = person(roles=["admin"])
    bare = person(roles=["lead"])
    assert access.may_manage_automations(lead, "support-ticket")
    assert not access.may_manage_automations(lead, "expense-approval")
    assert not access.may_manage_automations(team_lead, "support-ticket")
    assert not access.may_manage_automations(manager, "support-ticket")
    assert not access.may_manage_automations(bare, "support-ticket")
    assert access.may_manage_automations(admin, "anything")


def test_timeline_lines_become_events_with_their_depth() -> None:
    line: dict[str, Any] = {
        "line_id": 7,
        "at": T0,
        "run_id": "r",
        "subject_id": "s",
        "subject": {"priority": "P1"},
        "slot": None,
        "actor": None,
    }
    entered = timeline.event_of(
        kind="state.entered", details={"state": "triage", timeline.DEPTH_DETAIL: 2}, **line
    )
    assert entered is not None
    assert (entered.kind, entered.facts["state"], entered.depth) == (
        "run.state_entered",
        "triage",
        2,
    )
    assert timeline.event_of(kind="link.minted", details={}, **line) is None


def test_delay_wait_webhook_and_payload_parameters_are_checked_by_pointer() -> None:
    def doc(*actions: dict[str, Any]) -> dict[str, Any]:
        return {"name": "n", "trigger": {"on": "run.ended"}, "actions": list(actions)}

    deep: Any = {"lit": 1}
    for _ in range(300):
        deep = {"op": "not", "args": [deep]}
    assert problems(
        doc(
            {"do": "delay", "minutes": 0},
            {"do": "delay", "minutes": 5, "business": "yes"},
            {"do": "wait", "timeout_minutes": 5},
            {"do": "wait", "until": {"op": "?"}, "timeout_minutes": 5},
            {"do": "wait", "until": deep, "timeout_minutes": 5},
            {"do": "raise_event", "event": "e", "payload": {"a": {"nested": 1}}},
            {"do": "raise_event", "event": "e", "payload": "text"},
            {"do": "webhook"},
        )
    ) == [
        ("/actions/0/minutes", "bad_delay"),
        ("/actions/1/business", "wrong_type"),
        ("/actions/2/until", "missing"),
        ("/actions/3/until", "bad_expression"),
        ("/actions/4/until", "too_large"),
        ("/actions/5/payload/a", "wrong_type"),
        ("/actions/6/payload", "wrong_type"),
        ("/actions/7/endpoint", "missing"),
    ]
    read = rule(
        doc(
            {
                "do": "wait",
                "until": {"op": "is_set", "args": [{"ref": "subject.x"}]},
                "timeout_minutes": 60,
            },
            {"do": "delay", "minutes": 30, "business": True},
            {"do": "raise_event", "event": "e", "payload": {"decision": "approve", "n": 2}},
            {"do": "webhook", "endpoint": "abc", "message": "hi"},
        )
    )
    assert [a.verb for a in read.actions] == ["wait", "delay", "raise_event", "webhook"]
