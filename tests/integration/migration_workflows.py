"""A workflow in two versions with a declared run migration (test_run_migrations.py).

Version 2 keeps ``submitted`` (runs stay), removes ``query`` (its runs go to the new
``checked``), and retires ``archived`` (its runs are cancelled).
"""

from __future__ import annotations

from taskflow import (
    Field,
    Route,
    Slot,
    State,
    Workflow,
    business,
    migration,
    milestone,
    payload,
    reminder,
    who,
)


def _review() -> State:
    return State(
        initial=True,
        slots=[
            Slot(
                "review",
                fields=[Field.choice("decision", ["archive", "query", "pay"])],
                candidates=who.role("finance"),
                milestones=[milestone.finished(within=business.hours(4))],
                reminders=[reminder.at(0.5, of="finished", notify=who.holder())],
            )
        ],
        then=[
            Route("archived", when=payload.review.decision == "archive"),
            Route("query", when=payload.review.decision == "query"),
            Route("paid"),
        ],
    )


class ClaimV1(Workflow):
    """Finance reviews a claim: pay it, ask about it, or archive it."""

    name = "claim"
    version = 1
    tracks = "claim"
    calendar = "uk-london"

    submitted = _review()
    archived = State(slots=[Slot("file_it", candidates=who.role("finance"))], then=[Route("paid")])
    query = State(
        slots=[
            Slot(
                "answer",
                candidates=who.role("finance"),
                milestones=[milestone.finished(within=business.hours(8))],
            )
        ],
        then=[Route("submitted")],
    )
    paid = State(terminal=True)


class ClaimV2(Workflow):
    """As version 1, but a question becomes a check by finance, and archiving is gone."""

    name = "claim"
    version = 2
    tracks = "claim"
    calendar = "uk-london"
    migrations = [
        migration.from_version(
            1,
            submitted=migration.stay,
            query=migration.to("checked"),
            archived=migration.cancel("archiving was retired"),
        )
    ]

    submitted = State(
        initial=True,
        slots=list(_review().slots),
        then=[Route("checked", when=payload.review.decision == "query"), Route("paid")],
    )
    checked = State(
        slots=[
            Slot(
                "check",
                candidates=who.role("finance"),
                milestones=[milestone.finished(within=business.hours(2))],
            )
        ],
        then=[Route("paid")],
    )
    paid = State(terminal=True)
