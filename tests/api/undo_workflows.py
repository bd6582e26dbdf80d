"""Workflows of the undo tests over HTTP: a completion that may be undone (no window) into
a state whose timeout moves the run on after five minutes (the race with a timer), into a
state that starts a child run, and into one that collects an outsider's answer by link;
and completions out of states whose other slots were still pending or had expired."""

from __future__ import annotations

from taskflow import (
    Child,
    Route,
    Slot,
    State,
    Undoable,
    Workflow,
    any_satisfied,
    expire,
    expired,
    real,
    subject,
    timeout,
    who,
)


class HeldOrder(Workflow):
    """Finance reviews an order, which is then held for release; unreleased, it lapses."""

    name = "held-order"
    tracks = "order"

    review = State(
        initial=True,
        slots=[Slot("review", candidates=who.role("finance"))],
        then=[Route("held")],
        # The review's completion may be taken back, for as long as it is the latest change.
        undoable=Undoable(),
    )
    held = State(
        slots=[Slot("release", candidates=who.role("finance"))],
        then=[Route("released")],
        timeouts=[timeout(real.minutes(5), move_to="lapsed")],
    )
    # Lapsed orders are chased (not ended), so an undo after the lapse meets the timeout's
    # move, which is never undone, rather than an ended run.
    lapsed = State(slots=[Slot("chase", candidates=who.role("finance"))], then=[Route("released")])
    released = State(terminal=True)


class UndoNote(Workflow):
    """A note finance files about an order; nobody waits for it."""

    name = "undo-note"
    tracks = "order"

    noting = State(initial=True, slots=[Slot("note", candidates=who.role("finance"))], then="done")
    done = State(terminal=True)


class CheckedOrder(Workflow):
    """A reviewed order is checked while a note about it is filed as a run of its own: once
    that child run started, the review's completion reached beyond the run and stands."""

    name = "checked-order"
    tracks = "order"

    review = State(
        initial=True,
        slots=[Slot("review", candidates=who.role("finance"))],
        then=[Route("checking")],
        undoable=Undoable(),
    )
    checking = State(
        slots=[Slot("check", candidates=who.role("finance"))],
        children=[Child("undo-note", label="note", awaited=False)],
        then=[Route("checked")],
    )
    checked = State(terminal=True)


class CollectedOrder(Workflow):
    """A reviewed order collects the supplier's confirmation (by link, from outside) and a
    sign-off: once the supplier used the link, the review's completion stands."""

    name = "collected-order"
    tracks = "order"

    review = State(
        initial=True,
        slots=[Slot("review", candidates=who.role("finance"))],
        then=[Route("collecting")],
        undoable=Undoable(),
    )
    collecting = State(
        slots=[
            Slot(
                "confirmation",
                candidates=who.role("finance"),
                outsiders=who.email(subject.supplier_email),
                magic_link=True,
            ),
            Slot("sign_off", candidates=who.role("finance")),
        ],
        then=[Route("collected")],
    )
    collected = State(terminal=True)


class DraftedOrder(Workflow):
    """Finance drafts an order, checks it, then approves it once checked; the draft alone
    sends it on (any one slot). An undo of that completion brings the approval back as it
    stood: still waiting for the check."""

    name = "drafted-order"
    tracks = "order"

    drafting = State(
        initial=True,
        slots=[
            Slot("draft", candidates=who.role("finance")),
            Slot("check", candidates=who.role("finance")),
            Slot("approve", candidates=who.role("finance"), after=["check"]),
        ],
        done=any_satisfied,
        then=[Route("sent")],
        undoable=Undoable(),
    )
    sent = State(slots=[Slot("ship", candidates=who.role("finance"))], then=[Route("shipped")])
    shipped = State(terminal=True)


class QuotedOrder(Workflow):
    """A supplier's quote is asked for an hour; the order is drafted meanwhile. An order
    whose quote lapsed goes to a buyer's review instead of straight to shipping."""

    name = "quoted-order"
    tracks = "order"

    quoting = State(
        initial=True,
        slots=[
            Slot("quote", candidates=who.role("finance"), expires=expire.after(real.hours(1))),
            Slot("draft", candidates=who.role("finance")),
        ],
        then=[Route("buyer_review", when=expired.quote >= 1), Route("shipping")],
        undoable=Undoable(),
    )
    buyer_review = State(slots=[Slot("review", candidates=who.role("finance"))], then="shipping")
    shipping = State(terminal=True)
