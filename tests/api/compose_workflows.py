"""Workflows that start child runs, for the composition tests (docs/composition.md).

``compose-parent`` awaits a ``compose-review`` (label ``review``) and starts a bare
``compose-note``; ``compose-top`` awaits a ``compose-parent`` (label ``inner``) to show a
failure travelling up; ``compose-late`` awaits a ``compose-quick`` that expires in the
worker; ``compose-moving`` renames its label in version 2; ``compose-race`` races two
``compose-quote`` saga steps (``await_first``), each undone by a ``compose-note``. The
black-box test (``tests/acceptance/test_children_blackbox.py``) serves this file too. All
track ``doc`` subjects, so a child runs on its parent's subject (a quote: on the document
its parent names).
"""

from __future__ import annotations

from taskflow import (
    Catch,
    Child,
    Field,
    Move,
    Route,
    Slot,
    State,
    Workflow,
    child,
    migration,
    payload,
    real,
    subject,
    timeout,
    who,
)


class ComposeReview(Workflow):
    """A finance reviewer scores the document; a low score fails the review."""

    name = "compose-review"
    tracks = "doc"
    result = {"score": payload.review.score}

    reviewing = State(
        initial=True,
        slots=[Slot("review", fields=[Field.number("score")], candidates=who.role("finance"))],
        then=[Route("rejected", when=payload.review.score < 3), Route("passed")],
        moves=[Move("give_up", to="expired", by=who.role("finance"))],
    )
    passed = State(terminal=True)
    rejected = State(terminal=True, failure="rejected")
    expired = State(terminal=True, failure="expired")


class ComposeNote(Workflow):
    """A note someone files; nobody waits for it."""

    name = "compose-note"
    tracks = "doc"

    noting = State(initial=True, slots=[Slot("note", candidates=who.role("finance"))], then="done")
    done = State(terminal=True)


class ComposeParent(Workflow):
    """Awaits the review (and starts a bare note); routes on the review's score."""

    name = "compose-parent"
    tracks = "doc"

    waiting = State(
        initial=True,
        children=[
            Child("compose-review", label="review"),
            Child("compose-note", label="note", awaited=False),
        ],
        then=[Route("good", when=child("review").result.score >= 8), Route("fine")],
        catch=[Catch("caught", kinds=["rejected"]), Catch("blocked", kinds=["refused"])],
    )
    good = State(terminal=True)
    fine = State(terminal=True)
    caught = State(terminal=True)
    blocked = State(terminal=True)


class ComposeTop(Workflow):
    """Awaits a compose-parent: an expired review travels up through it to here."""

    name = "compose-top"
    tracks = "doc"

    waiting = State(
        initial=True,
        children=[Child("compose-parent", label="inner")],
        then="done",
        catch=[Catch("saw_expiry", kinds=["expired"])],
    )
    done = State(terminal=True)
    saw_expiry = State(terminal=True)


class ComposeQuick(Workflow):
    """Expires two seconds in (a timer the worker fires): a failure its parent catches."""

    name = "compose-quick"
    tracks = "doc"

    waiting = State(
        initial=True,
        slots=[Slot("never", candidates=who.role("finance"))],
        then="done",
        timeouts=[timeout(real.minutes(2 / 60), move_to="expired")],
    )
    done = State(terminal=True)
    expired = State(terminal=True, failure="expired")


class ComposeLate(Workflow):
    """Awaits a compose-quick and catches its expiry."""

    name = "compose-late"
    tracks = "doc"

    waiting = State(
        initial=True,
        children=[Child("compose-quick", label="quick")],
        then="done",
        catch=[Catch("late", kinds=["expired"])],
    )
    done = State(terminal=True)
    late = State(terminal=True)


class ComposeMovingV1(Workflow):
    """Version 1 awaits its review under the label ``review``."""

    name = "compose-moving"
    version = 1
    tracks = "doc"

    waiting = State(initial=True, children=[Child("compose-review", label="review")], then="done")
    done = State(terminal=True)


class ComposeMovingV2(Workflow):
    """Version 2 calls it ``check`` and routes on its score; waiting runs of version 1 stay,
    their review now awaited as ``check``."""

    name = "compose-moving"
    version = 2
    tracks = "doc"
    migrations = [migration.from_version(1, waiting=migration.stay(children={"review": "check"}))]

    waiting = State(
        initial=True,
        children=[Child("compose-review", label="check")],
        then=[Route("high", when=child("check").result.score >= 8), Route("done")],
    )
    high = State(terminal=True)
    done = State(terminal=True)


class ComposeQuote(Workflow):
    """A finance person quotes a price, or declines (a failure)."""

    name = "compose-quote"
    tracks = "doc"

    quoting = State(
        initial=True,
        slots=[Slot("quote", fields=[Field.number("price")], candidates=who.role("finance"))],
        then="quoted",
        moves=[Move("decline", to="declined", by=who.role("finance"))],
    )
    quoted = State(terminal=True)
    declined = State(terminal=True, failure="declined")


class ComposeRace(Workflow):
    """Two quotes race (on the documents ``subject.first`` and ``subject.second``): the first
    quoted wins; the other is cancelled, or undone by a note if it was quoted too."""

    name = "compose-race"
    tracks = "doc"

    racing = State(
        initial=True,
        await_first=True,
        children=[
            Child(
                "compose-quote", label="q1", external_id=subject.first, compensation="compose-note"
            ),
            Child(
                "compose-quote", label="q2", external_id=subject.second, compensation="compose-note"
            ),
        ],
        then="won",
        catch=[Catch("lost", kinds=["declined"])],
    )
    won = State(terminal=True)
    lost = State(terminal=True)
