"""The pure questions the engine asks of a definition."""

from __future__ import annotations

from taskflow.core.definition import (
    Move,
    Precondition,
    Route,
    Slot,
    State,
    all_satisfied,
    any_satisfied,
    count,
    payload,
    principal,
    runtime,
    subject,
)
from taskflow.core.definition.conditions.expr import Env
from taskflow.core.definition.model import Completion


def test_foreach_expands_subject_lists_and_literals() -> None:
    docs = Slot("upload", foreach=subject.docs)
    assert runtime.foreach_items(docs, {"docs": ["a", "b"]}) == ["a", "b"]
    assert runtime.foreach_items(docs, {}) == []
    assert runtime.foreach_items(Slot("x", foreach=["eu", "us"]), {}) == ["eu", "us"]
    assert runtime.foreach_items(Slot("plain"), {}) is None


def test_armed_and_after() -> None:
    security = Slot("security", armed=subject.personal_data, after=["upload"])
    assert runtime.is_armed(security, Env(subject={"personal_data": True}))
    assert not runtime.is_armed(security, Env(subject={}))  # unknown: not armed
    assert not runtime.may_open(security, set())
    assert runtime.may_open(security, {"upload"})


def test_completion_rules() -> None:
    e = Env(payload={"a": {"ok": True}})
    assert runtime.completion_met(all_satisfied, 2, 2, e)
    assert not runtime.completion_met(all_satisfied, 1, 2, e)
    assert runtime.completion_met(all_satisfied, 0, 0, e)  # no slots: done at once
    assert runtime.completion_met(any_satisfied, 1, 3, e)
    assert runtime.completion_met(count(2), 2, 3, e)
    assert not runtime.completion_met(count(2), 1, 3, e)
    assert runtime.completion_met(Completion("when", when=payload.a.ok == True), 0, 1, e)  # noqa: E712


def test_first_matching_route_and_no_match() -> None:
    state = State(
        then=[Route("big", when=subject.amount > 1000), Route("small", when=subject.amount <= 1000)]
    )
    assert runtime.choose_route(state, Env(subject={"amount": 5000})) == "big"
    assert runtime.choose_route(state, Env(subject={"amount": 5})) == "small"
    assert runtime.choose_route(state, Env(subject={})) is None  # unknown matches nothing


def test_move_guard_and_checklist() -> None:
    move = Move(
        "approve",
        to="done",
        guard=principal.id != subject.owner,
        preconditions=[Precondition("receipts attached", subject.receipts > 0)],
    )
    state = State(moves=[move], preconditions=[Precondition("not on hold", ~subject.hold)])
    ok = runtime.check_move(
        state,
        move,
        Env(subject={"owner": "bob", "receipts": 2, "hold": False}, principal={"id": "alice"}),
    )
    assert ok.allowed
    assert ok.reasons == ()
    refused = runtime.check_move(
        state, move, Env(subject={"owner": "alice"}, principal={"id": "alice"})
    )
    assert not refused.allowed
    assert refused.reasons == (
        "guard principal.id != subject.owner is false",
        "'not on hold' is not met",
        "'receipts attached' is not met",
    )
    assert [(c.name, c.holds) for c in refused.checklist] == [
        ("not on hold", None),
        ("receipts attached", None),
    ]


def test_subject_paths_tell_what_a_subject_update_touches() -> None:
    from taskflow.core.definition import budget_by, business, milestone, priority_by, who

    slot = Slot(
        "answer",
        label="Answer {subject.reference}",
        candidates=who.group(subject.team) - who.id(subject.owner),
        priority=priority_by(subject.priority, {"P1": 1}),
        milestones=[
            milestone.finished(within=budget_by(subject.priority, {"P1": business.hours(1)}))
        ],
    )
    assert runtime.subject_paths(slot) == {
        "milestones": {"subject.priority"},
        "priority": {"subject.priority"},
        "label": {"subject.reference"},
        "candidates": {"subject.team", "subject.owner"},
    }
