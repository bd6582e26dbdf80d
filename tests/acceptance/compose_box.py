"""The workflows of ``test_children_blackbox.py``, written to a temporary folder by the test:
a parent awaiting a child someone completes, and one awaiting a child that times out in the
worker (a failure the parent catches)."""

from taskflow import (
    Catch,
    Child,
    Field,
    Route,
    Slot,
    State,
    Workflow,
    child,
    payload,
    real,
    timeout,
    who,
)


class BoxCheck(Workflow):
    name = "box-check"
    tracks = "order"
    result = {"score": payload.check.score}

    checking = State(
        initial=True,
        slots=[Slot("check", fields=[Field.number("score")], candidates=who.role("finance"))],
        then="checked",
    )
    checked = State(terminal=True)


class BoxQuick(Workflow):
    name = "box-quick"
    tracks = "order"

    waiting = State(
        initial=True,
        slots=[Slot("never", candidates=who.role("finance"))],
        then="done",
        timeouts=[timeout(real.minutes(2 / 60), move_to="expired")],
    )
    done = State(terminal=True)
    expired = State(terminal=True, failure="expired")


class BoxParent(Workflow):
    name = "box-parent"
    tracks = "order"

    waiting = State(
        initial=True,
        children=[Child("box-check", label="check")],
        then=[Route("good", when=child("check").result.score >= 8), Route("fine")],
    )
    good = State(terminal=True)
    fine = State(terminal=True)


class BoxLate(Workflow):
    name = "box-late"
    tracks = "order"

    waiting = State(
        initial=True,
        children=[Child("box-quick", label="quick")],
        then="done",
        catch=[Catch("late", kinds=["expired"])],
    )
    done = State(terminal=True)
    late = State(terminal=True)
