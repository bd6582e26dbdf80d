"""Workflows of the ends-together test (tests/api/test_ends_together.py): a parent awaiting
two notes, each filed by finance."""

from __future__ import annotations

from taskflow import Child, Slot, State, Workflow, subject, who


class PairNote(Workflow):
    """A note finance files."""

    name = "pair-note"
    tracks = "doc"

    noting = State(initial=True, slots=[Slot("note", candidates=who.role("finance"))], then="done")
    done = State(terminal=True)


class Pair(Workflow):
    """Awaits two notes (both filed; each on its own document, which the pair names), then
    is filed itself."""

    name = "pair"
    tracks = "doc"

    waiting = State(
        initial=True,
        children=[
            Child("pair-note", label="first", external_id=subject.first),
            Child("pair-note", label="second", external_id=subject.second),
        ],
        then="filed",
    )
    filed = State(terminal=True)
