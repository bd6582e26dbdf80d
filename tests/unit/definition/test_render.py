"""Definitions as data: the JSON document, its stable digest, the Mermaid diagram."""

from __future__ import annotations

import json

from taskflow.core.definition import (
    Route,
    Slot,
    State,
    Workflow,
    business,
    milestone,
    payload,
    real,
    render,
    subject,
    timeout,
    who,
)


def build(hours: int = 4) -> type[Workflow]:
    class Claim(Workflow):
        """A claim is reviewed."""

        name = "claim"
        tracks = "claim"
        calendar = "uk-london"
        correlate_by = subject.reference

        open = State(
            initial=True,
            slots=[
                Slot(
                    "review",
                    candidates=who.role("claims") - who.id(subject.owner),
                    milestones=[milestone.finished(within=business.hours(hours))],
                )
            ],
            then=[Route("paid", when=payload.review.ok == True), Route("closed")],  # noqa: E712
            timeouts=[timeout(real.days(30), move_to="closed")],
        )
        waiting = State(pausing=True, then="open")
        paid = State(terminal=True)
        closed = State(terminal=True)

    return Claim


def test_document_is_plain_json_with_the_whole_definition() -> None:
    definition = build().definition
    assert definition is not None
    doc = definition.to_document()
    assert json.loads(json.dumps(doc)) == doc
    assert doc["name"] == "claim"
    assert doc["description"] == "A claim is reviewed."
    assert doc["initial_state"] == "open"
    assert doc["correlate_by"] == {"ref": "subject.reference"}
    review = doc["states"][0]["slots"][0]
    assert review["candidates"] == {
        "and": [{"role": {"lit": "claims"}}, {"not": [{"user": {"ref": "subject.owner"}}]}]
    }
    assert review["milestones"] == [
        {
            "kind": "finished",
            "within": {"kind": "business", "amount": 4, "unit": "hours", "calendar": None},
            "calendar": None,
        }
    ]
    assert doc["states"][0]["routes"][0]["when"] == {
        "op": "==",
        "args": [{"ref": "payload.review.ok"}, {"lit": True}],
    }


def test_digest_is_stable_and_changes_with_behaviour() -> None:
    first, again, changed = build().definition, build().definition, build(5).definition
    assert first is not None
    assert again is not None
    assert changed is not None
    assert first.digest == again.digest
    assert first.digest.startswith("sha256:")
    assert len(first.digest) == 7 + 64
    assert first.digest != changed.digest


def test_mermaid_diagram_shows_states_slots_routes_and_timeouts() -> None:
    definition = build().definition
    assert definition is not None
    text = render.mermaid(definition)
    assert text.startswith("stateDiagram-v2\n")
    assert "    [*] --> open\n" in text
    assert "    open --> paid: payload.review.ok == true\n" in text
    assert "    open --> closed: otherwise\n" in text
    assert "    open --> closed: after 30 real days\n" in text
    assert "slot review · by role#58;claims and not user#58;#123;subject.owner#125;" in text
    assert "note right of waiting: clocks paused" in text
    assert "    paid --> [*]\n" in text
