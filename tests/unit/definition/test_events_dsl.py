"""Declared events (raisers, buffers), link outsiders and shareable labels: DSL and checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskflow import Buffer, Event
from taskflow.cli import main
from taskflow.core.access.principals import Principal
from taskflow.core.definition import (
    Field,
    Route,
    Slot,
    State,
    business,
    define,
    payload,
    real,
    render,
    subject,
    who,
)
from taskflow.core.definition import events as ev
from taskflow.core.definition.checks import validate as v
from taskflow.core.definition.checks.problems import Problem
from taskflow.core.definition.workflow import Definition
from tests.unit.definition.conftest import RefusedCheck

CALENDARS = {"uk-london"}


def workflow(events: tuple[Event, ...] = (), **slot: Any) -> Definition:
    review = Slot(
        "review",
        waits_for="reviewed",
        fields=[Field.text("comment", required=False)],
        candidates=who.role("finance"),
        **slot,
    )
    return define(
        "expense",
        tracks="expense",
        calendar="uk-london",
        states={
            "submitted": State(initial=True, slots=[review], then=[Route("done")]),
            "done": State(terminal=True),
        },
        events=events,
    )


def codes(definition: Definition) -> list[str]:
    return [p.code for p in v.problems(definition, CALENDARS)]


def only(definition: Definition) -> Problem:
    found = v.problems(definition, CALENDARS)
    assert len(found) == 1, [str(p) for p in found]
    return found[0]


def test_declared_events_are_sound() -> None:
    sound = workflow(
        (
            Event(
                "reviewed",
                raisers=who.role("finance") - who.id(subject.submitted_by),
                buffer=Buffer(max=3, for_=real.days(2)),
            ),
        )
    )
    assert codes(sound) == []
    assert sound.event("reviewed") is not None
    assert sound.event("nope") is None


def test_an_event_no_slot_waits_for_is_named() -> None:
    problem = only(workflow((Event("reviewd"),)))
    assert problem.code == "UNKNOWN_EVENT"
    assert problem.where == "event 'reviewd'"
    assert "reviewed" in problem.fix


@pytest.mark.parametrize(
    ("buffer", "text"),
    [
        (Buffer(max=0), "max=0"),
        (Buffer(for_=business.days(1)), "real time"),
        (Buffer(for_=real.hours(0)), "more than zero"),
    ],
)
def test_a_bad_buffer_is_named(buffer: Buffer, text: str) -> None:
    problem = only(workflow((Event("reviewed", buffer=buffer),)))
    assert problem.code == "BAD_BUFFER"
    assert text in problem.message + problem.fix


def test_raisers_are_checked_like_other_audiences() -> None:
    holder = only(workflow((Event("reviewed", raisers=who.holder()),)))
    assert holder.code == "BAD_AUDIENCE"
    assert holder.where == "event 'reviewed'"
    reads_payload = only(workflow((Event("reviewed", raisers=who.id(payload.review.by)),)))
    assert reads_payload.code == "BAD_REFERENCE"
    twice = codes(workflow((Event("reviewed"), Event("reviewed"))))
    assert twice == ["DUPLICATE_NAME"]


def test_raisers_admit_by_the_principals_keys_and_the_subject() -> None:
    rule = Event("reviewed", raisers=who.role("finance") - who.id(subject.submitted_by))
    fiona = Principal(id="fiona", display_name="fiona", roles=("finance",))
    sam = Principal(id="sam", display_name="sam", roles=("finance",))
    paul = Principal(id="paul", display_name="paul", roles=("accounts-payable",))
    claim = {"submitted_by": "sam"}
    assert ev.may_raise(rule, fiona.audience_keys, claim)
    assert not ev.may_raise(rule, sam.audience_keys, claim)
    assert not ev.may_raise(rule, paul.audience_keys, claim)
    assert ev.may_raise(None, paul.audience_keys, claim)
    assert ev.may_raise(Event("reviewed"), paul.audience_keys, claim)


def test_events_and_outsiders_are_in_the_document_only_when_declared() -> None:
    plain = workflow()
    doc = render.document(plain)
    assert "events" not in doc
    assert "outsiders" not in doc["states"][0]["slots"][0]
    declared = workflow(
        (Event("reviewed", raisers=who.role("finance"), buffer=Buffer()),),
        magic_link=True,
        outsiders=who.email(subject.contact),
    )
    doc = render.document(declared)
    assert doc["events"] == [
        {
            "name": "reviewed",
            "description": None,
            "raisers": {"role": {"lit": "finance"}},
            "buffer": {
                "max": 10,
                "for": {"kind": "real", "amount": 7, "unit": "days", "calendar": None},
            },
        }
    ]
    assert doc["states"][0]["slots"][0]["outsiders"] == {"email": {"ref": "subject.contact"}}
    assert declared.digest != plain.digest
    graph = render.mermaid(declared)
    assert "event reviewed#58; raised by role#58;finance, buffered" in graph
    assert "links to email#58;#123;subject.contact#125;" in graph


def test_outsiders_need_a_link_slot() -> None:
    problem = only(workflow(outsiders=who.email(subject.contact)))
    assert problem.code == "LINKS_NOT_ALLOWED"


def test_a_link_slot_label_may_read_only_shareable_fields() -> None:
    leaky = workflow(
        magic_link=True,
        label="Review {subject.reference} for {subject.salary:,.2f}",
        shareable=["reference"],
    )
    problem = only(leaky)
    assert problem.code == "NOT_SHAREABLE"
    assert problem.workflow == "expense"
    assert problem.where == "state 'submitted' / slot 'review'"
    assert "subject.salary" in problem.message
    assert "'salary'" in problem.fix
    assert "workflow 'expense', state 'submitted' / slot 'review'" in str(problem)
    # A staff-only slot may read anything; a shared field is fine.
    assert codes(workflow(label="Review {subject.salary}")) == []
    assert (
        codes(
            workflow(magic_link=True, label="Review {subject.reference}", shareable=["reference"])
        )
        == []
    )


def test_taskflow_check_fails_on_a_leaky_link_label(refused_check: RefusedCheck) -> None:
    err = refused_check(
        "from taskflow import Route, Slot, State, Workflow, who\n"
        "class Leaky(Workflow):\n"
        "    tracks = 'contract'\n"
        "    waiting = State(initial=True, then=[Route('done')], slots=[Slot(\n"
        "        'sign', candidates=who.email('a@b.example'), magic_link=True,\n"
        "        label='Sign {subject.reference} worth {subject.value}',\n"
        "        shareable=['reference'])])\n"
        "    done = State(terminal=True)\n",
        file="leaky.py",
    )
    assert "workflow 'leaky', state 'waiting' / slot 'sign'" in err
    assert "subject.value" in err
    assert "NOT_SHAREABLE" in err


def test_show_prints_declared_events(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "parcel.py").write_text(
        "from taskflow import Buffer, Event, Route, Slot, State, Workflow, real, who\n"
        "class Parcel(Workflow):\n"
        "    tracks = 'parcel'\n"
        "    events = [Event('scanned', raisers=who.role('warehouse'),\n"
        "                    buffer=Buffer(max=2, for_=real.hours(6)))]\n"
        "    waiting = State(initial=True, then=[Route('done')], slots=[Slot(\n"
        "        'scan', waits_for='scanned', candidates=who.role('warehouse'))])\n"
        "    done = State(terminal=True)\n"
    )
    assert main(["show", "parcel", "--path", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["events"][0]["raisers"] == {"role": {"lit": "warehouse"}}
    assert doc["events"][0]["buffer"]["max"] == 2
