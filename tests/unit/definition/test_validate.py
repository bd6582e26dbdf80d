"""Load-time validation: each mistake gives an error naming the workflow, the place and the fix."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from taskflow.core.definition import (
    DefinitionError,
    Field,
    Move,
    Route,
    Slot,
    State,
    Workflow,
    business,
    count,
    define,
    item,
    milestone,
    payload,
    real,
    reminder,
    subject,
    timeout,
    who,
)
from taskflow.core.definition.budgets import budget_by
from taskflow.core.definition.checks import validate as v
from taskflow.core.definition.checks.problems import Problem
from taskflow.core.definition.workflow import Definition

CALENDARS = {"uk-london", "24x7"}


def review(**overrides: Any) -> Slot:
    fields: dict[str, Any] = {
        "fields": [Field.choice("decision", ["approve", "reject"])],
        "candidates": who.role("finance"),
    }
    return Slot("review", **{**fields, **overrides})


def workflow(**states: State) -> Definition:
    base = {
        "submitted": State(initial=True, slots=[review()], then=[Route("done")]),
        "done": State(terminal=True),
    }
    return define("expense", tracks="expense", calendar="uk-london", states={**base, **states})


def only(definition: Definition) -> Problem:
    found = v.problems(definition, CALENDARS)
    assert len(found) == 1, [str(p) for p in found]
    return found[0]


def test_a_sound_workflow_has_no_problems() -> None:
    assert v.problems(workflow(), CALENDARS) == []
    assert v.validate(workflow(), CALENDARS).name == "expense"


def test_unknown_state_in_a_route() -> None:
    found = v.problems(
        workflow(submitted=State(initial=True, slots=[review()], then="dnoe")), CALENDARS
    )
    assert [p.code for p in found] == ["UNKNOWN_STATE", "UNREACHABLE_STATE"]  # done, now
    problem = found[0]
    assert problem.where == "state 'submitted'"
    assert "names state 'dnoe', which does not exist" in problem.message
    assert "use one of: done, submitted" in problem.fix
    assert str(problem).startswith("workflow 'expense', state 'submitted': a route names")


def test_unknown_state_in_a_move_a_timeout_and_a_reminder() -> None:
    slot = review(
        milestones=[milestone.finished(within=business.days(1))],
        reminders=[reminder.on_breach("finished", move_to="escalated")],
    )
    state = State(
        initial=True,
        slots=[slot],
        then="done",
        moves=[Move("cancel", to="cancelled")],
        timeouts=[timeout(real.days(30), move_to="expired")],
    )
    found = v.problems(workflow(submitted=state), CALENDARS)
    assert [(p.code, p.where) for p in found] == [
        ("UNKNOWN_STATE", "state 'submitted' / move 'cancel'"),
        ("UNKNOWN_STATE", "state 'submitted' / timeout 1"),
        ("UNKNOWN_STATE", "state 'submitted' / slot 'review' / reminder 1"),
    ]
    assert {p.message.split("'")[1] for p in found} == {"cancelled", "expired", "escalated"}


def test_unreachable_state() -> None:
    problem = only(workflow(orphan=State(terminal=True)))
    assert (problem.code, problem.where) == ("UNREACHABLE_STATE", "state 'orphan'")
    assert problem.fix == "add a route or move to it, or remove it"


def test_non_terminal_state_with_no_way_out() -> None:
    found = v.problems(workflow(submitted=State(initial=True, slots=[review()])), CALENDARS)
    assert [p.code for p in found] == ["NO_WAY_OUT", "UNREACHABLE_STATE"]
    assert "mark it terminal=True" in found[0].fix


def test_conditional_routes_without_fallback_or_other_exit() -> None:
    state = State(
        initial=True,
        slots=[review()],
        then=[Route("done", when=payload.review.decision == "approve")],
    )
    problem = only(workflow(submitted=state))
    assert problem.code == "NO_FALLBACK_ROUTE"
    assert "add a last Route('<state>') without a condition" in problem.fix


def test_conditional_routes_with_a_move_as_the_other_exit_are_fine() -> None:
    state = State(
        initial=True,
        slots=[review()],
        then=[Route("done", when=payload.review.decision == "approve")],
        moves=[Move("give_up", to="done")],
    )
    assert v.problems(workflow(submitted=state), CALENDARS) == []


def test_unconditional_route_before_conditional_ones() -> None:
    state = State(
        initial=True,
        slots=[review()],
        then=[Route("done"), Route("other", when=subject.amount > 5)],
    )
    problem = only(workflow(submitted=state, other=State(terminal=True)))
    assert problem.code == "ROUTE_SHADOWED"
    assert "routes to other, which can never be taken" in problem.message
    assert problem.fix == "put the route without a condition last, as the fallback"


def test_after_naming_an_unknown_sibling() -> None:
    state = State(initial=True, slots=[review(after=["upload"])], then="done")
    problem = only(workflow(submitted=state))
    assert (problem.code, problem.where) == ("UNKNOWN_SIBLING", "state 'submitted' / slot 'review'")
    assert problem.fix == "use one of: review"


def test_after_cycle() -> None:
    slots = [Slot("a", after=["b"]), Slot("b", after=["c"]), Slot("c", after=["a"])]
    problem = only(workflow(submitted=State(initial=True, slots=slots, then="done")))
    assert problem.code == "AFTER_CYCLE"
    assert problem.message == "slots wait for each other: a -> b -> c -> a"


def test_slot_waiting_for_itself() -> None:
    problem = only(
        workflow(submitted=State(initial=True, slots=[review(after=["review"])], then="done"))
    )
    assert (problem.code, problem.message) == ("AFTER_CYCLE", "the slot waits for itself")


def test_unknown_calendar_anywhere() -> None:
    slot = review(
        milestones=[
            milestone.assigned(within=business.hours(4, calendar="uk-londn")),
            milestone.finished(within=business.days(2), calendar="mars"),
        ]
    )
    d = define(
        "expense",
        tracks="expense",
        calendar="uk-london-typo",
        states={"s": State(initial=True, slots=[slot], then="t"), "t": State(terminal=True)},
    )
    found = v.problems(d, CALENDARS)
    assert [p.code for p in found] == ["UNKNOWN_CALENDAR"] * 3
    assert "calendar 'uk-london-typo' is not defined" in found[0].message
    assert "use one of the known calendars (24x7, uk-london)" in found[0].fix
    assert v.problems(d, None) == []  # None skips the calendar check


def test_non_positive_budgets() -> None:
    slot = review(
        milestones=[
            milestone.assigned(within=business.hours(0)),
            milestone.finished(within=budget_by(subject.p, {"P1": real.hours(-1)})),
        ]
    )
    found = v.problems(
        workflow(submitted=State(initial=True, slots=[slot], then="done")), CALENDARS
    )
    assert [p.code for p in found] == ["NON_POSITIVE_BUDGET"] * 2
    assert found[0].message == "the assigned milestone's budget is 0 hours"
    assert found[0].fix == "give a budget greater than zero"


def test_reminder_firing_after_its_own_until() -> None:
    slot = review(
        milestones=[milestone.finished(within=business.days(2))],
        reminders=[
            reminder.at(0.75, of="finished", until=0.5, notify=who.holder()),
            reminder.after(
                business.hours(10), of="finished", until=business.hours(4), notify=who.holder()
            ),
        ],
    )
    found = v.problems(
        workflow(submitted=State(initial=True, slots=[slot], then="done")), CALENDARS
    )
    assert [p.code for p in found] == ["REMINDER_AFTER_UNTIL"] * 2
    assert "first fires at 75% of the budget, after its own until (50% of the budget)" in (
        found[0].message
    )


def test_reminder_on_a_milestone_the_slot_does_not_declare() -> None:
    slot = review(reminders=[reminder.on_breach("assigned", notify=who.holder())])
    problem = only(workflow(submitted=State(initial=True, slots=[slot], then="done")))
    assert problem.code == "UNKNOWN_MILESTONE"
    assert problem.fix == "add milestone.assigned(within=...) or change of="


def test_a_reminder_asking_for_a_link_needs_a_magic_link_slot_and_an_outsider() -> None:
    outsider = who.email(subject.contact_email, name=subject.contact_name)
    asks = reminder.after(business.days(2), notify=outsider, with_link=True)
    ok = review(milestones=[milestone.finished(within=business.days(5))], reminders=[asks])
    assert (
        v.problems(
            workflow(
                submitted=State(
                    initial=True, slots=[review(magic_link=True, **_sla(asks))], then="done"
                )
            ),
            CALENDARS,
        )
        == []
    )

    problem = only(workflow(submitted=State(initial=True, slots=[ok], then="done")))
    assert problem.code == "LINKS_NOT_ALLOWED"
    assert problem.where == "state 'submitted' / slot 'review' / reminder 1"
    assert "asks for a magic link (with_link=True)" in problem.message
    assert problem.fix == "add magic_link=True (and shareable=[...]) to the slot, or drop with_link"

    # who.candidates() counts when the slot's candidates name an address.
    via_candidates = reminder.after(business.days(2), notify=who.candidates(), with_link=True)
    with_outsider = review(
        magic_link=True, candidates=outsider | who.role("finance"), **_sla(via_candidates)
    )
    assert (
        v.problems(
            workflow(submitted=State(initial=True, slots=[with_outsider], then="done")), CALENDARS
        )
        == []
    )

    to_staff = reminder.after(business.days(2), notify=who.holder(), with_link=True)
    nobody = reminder.after(business.days(2), with_link=True)
    found = v.problems(
        workflow(
            submitted=State(
                initial=True,
                slots=[review(magic_link=True, **_sla(to_staff, nobody))],
                then="done",
            )
        ),
        CALENDARS,
    )
    assert [p.code for p in found] == ["BAD_REMINDER", "BAD_REMINDER"]
    assert "names no e-mail address" in found[0].message
    assert found[0].fix.startswith("notify an outsider, e.g. notify=who.email(")
    assert "notifies nobody" in found[1].message


def _sla(*reminders: Any) -> dict[str, Any]:
    return {"milestones": [milestone.finished(within=business.days(5))], "reminders": reminders}


def test_duplicate_names() -> None:
    state = State(
        initial=True,
        slots=[review(), review(fields=[Field.text("a"), Field.text("a")])],
        then="done",
        moves=[Move("m", to="done"), Move("m", to="done")],
    )
    found = v.problems(workflow(submitted=state), CALENDARS)
    assert sorted(p.message for p in found) == [
        "two fields are called 'a'",
        "two moves are called 'm'",
        "two slots are called 'review'",
    ]
    assert {p.code for p in found} == {"DUPLICATE_NAME"}


def test_duplicate_states_in_a_definition() -> None:
    d = workflow()
    doubled = Definition(d.name, d.version, d.tracks, (*d.states, d.states[1]), d.calendar)
    assert [p.code for p in v.problems(doubled, CALENDARS)] == ["DUPLICATE_NAME"]


def test_terminal_state_with_slots_or_moves() -> None:
    done = State(terminal=True, slots=[Slot("x")], moves=[Move("reopen", to="submitted")])
    problem = only(workflow(done=done))
    assert problem.code == "TERMINAL_WITH_WORK"
    assert problem.message == "a terminal state declares slots, moves"


def test_payload_field_of_unknown_type() -> None:
    slot = review(fields=[Field("colour", "colour"), Field.choice("pick", [])])
    found = v.problems(
        workflow(submitted=State(initial=True, slots=[slot], then="done")), CALENDARS
    )
    assert [(p.code, p.where) for p in found] == [
        ("UNKNOWN_FIELD_TYPE", "state 'submitted' / slot 'review' / field 'colour'"),
        ("BAD_FIELD", "state 'submitted' / slot 'review' / field 'pick'"),
    ]
    assert found[0].fix.startswith("use one of: text, number, integer, boolean, date, choice")


def test_references_to_unknown_slots_and_fields_and_misplaced_item() -> None:
    state = State(
        initial=True,
        slots=[review(label="Review {item}", candidates=who.group(item.team))],
        then=[
            Route("done", when=payload.reviw.decision == "x"),
            Route("done", when=payload.review.decison == "x"),
            Route("done"),
        ],
    )
    found = v.problems(workflow(submitted=state), CALENDARS)
    messages = [p.message for p in found]
    assert "the route to 'done' reads payload.reviw.decision, but no slot is called 'reviw'" in (
        messages
    )
    assert any("slot 'review' has no field 'decison'" in m for m in messages)
    assert sum("reads item" in m for m in messages) == 2
    assert {p.code for p in found} == {"BAD_REFERENCE"}


def test_bad_completion_count_and_workflow_basics() -> None:
    d = define(
        "Bad Name",
        tracks="",
        version=0,
        states={
            "s": State(initial=True, slots=[review()], done=count(3), then="t"),
            "t": State(terminal=True),
        },
    )
    assert [p.code for p in v.problems(d, None)] == [
        "BAD_NAME",
        "BAD_VERSION",
        "NO_TRACKS",
        "BAD_COMPLETION",
    ]


def test_all_problems_are_reported_together_in_one_error() -> None:
    d = workflow(submitted=State(initial=True, slots=[review(after=["x"])], then="nowhere"))
    with pytest.raises(DefinitionError) as caught:
        v.validate(d, CALENDARS)
    assert caught.value.codes == ("UNKNOWN_STATE", "UNKNOWN_SIBLING", "UNREACHABLE_STATE")
    assert caught.value.code == "DEFINITION_INVALID"
    assert caught.value.message.startswith("3 problems in workflow definitions:")
    assert caught.value.facts["problems"][0]["workflow"] == "expense"


def test_the_class_form_names_the_class_in_errors() -> None:
    class Broken(Workflow):
        tracks = "thing"
        start = State(initial=True, then="finish")

    assert Broken.definition is not None
    assert Broken.definition.name == "broken"
    problem = only(Broken.definition)
    assert problem.source.endswith("Broken")
    assert "(" + problem.source + ")" in str(problem)


def test_plain_values_where_expressions_belong_are_named() -> None:
    slot = review(
        candidates="finance",  # type: ignore[arg-type]
        armed=True,  # type: ignore[arg-type]
        milestones=[milestone.finished(within=4)],  # type: ignore[arg-type]
    )
    found = v.problems(
        workflow(submitted=State(initial=True, slots=[slot], then="done")), CALENDARS
    )
    assert [p.code for p in found] == ["BAD_AUDIENCE", "BAD_CONDITION", "BAD_BUDGET"]
    assert found[0].message == "candidates is 'finance', not an audience"
    assert found[0].fix.startswith("build it with who.role(...)")


def test_a_new_version_may_subclass_the_old_one_and_replace_states() -> None:
    class V1(Workflow):
        name = "leave"
        tracks = "leave"
        asked = State(initial=True, slots=[Slot("approve")], then="granted")
        granted = State(terminal=True)

    class V2(V1):
        version = 2
        asked = State(initial=True, slots=[Slot("approve"), Slot("hr")], then="granted")

    assert V1.definition is not None
    assert V2.definition is not None
    assert [s.name for s in V2.definition.states] == ["asked", "granted"]
    assert [s.name for s in V2.definition.state("asked").slots] == ["approve", "hr"]
    assert (V2.definition.name, V2.definition.version) == ("leave", 2)
    assert V1.definition.digest != V2.definition.digest


def test_a_link_slot_label_reads_only_shareable_fields() -> None:
    leaky = review(
        magic_link=True,
        label="Review {subject.reference} for {subject.iban}",
        shareable=["reference"],
    )
    problem = only(workflow(submitted=State(initial=True, slots=[leaky], then=[Route("done")])))
    assert problem.code == "NOT_SHAREABLE"
    assert "subject.iban" in problem.message
    assert "add 'iban' to shareable" in problem.fix
    # The same label on a slot without links, or with the field shared, is fine.
    for slot in (
        review(label="Review {subject.reference} for {subject.iban}"),
        review(
            magic_link=True,
            label="Review {subject.reference} for {subject.iban}",
            shareable=["reference", "iban"],
        ),
    ):
        fine = workflow(submitted=State(initial=True, slots=[slot], then=[Route("done")]))
        assert v.problems(fine, CALENDARS) == []


def test_retention_is_a_real_duration_of_at_least_a_day() -> None:
    class Kept(Workflow):
        tracks = "expense"
        calendar = "uk-london"
        retention = real.days(90)
        submitted = State(initial=True, slots=[review()], then=[Route("done")])
        done = State(terminal=True)

    assert Kept.definition is not None
    assert Kept.definition.retention == real.days(90)
    assert v.problems(Kept.definition, CALENDARS) == []
    # Not in the document: changing it needs no new version.
    assert "retention" not in Kept.definition.to_document()
    base = workflow()
    kept = define(
        "expense", tracks="expense", calendar="uk-london", states={}, retention=real.hours(36)
    )
    assert kept.retention == real.hours(36)
    for wrong in (business.days(90), real.hours(2), real.days(0), 90, "90d"):
        bad = dataclasses.replace(base, retention=wrong)
        problem = only(bad)
        assert (problem.code, problem.where) == ("BAD_RETENTION", "retention"), problem
        assert "real.days(90)" in problem.fix
