"""Workflows of the event tests: declared raisers, buffered events, and link outsiders."""

from __future__ import annotations

from taskflow import (
    Buffer,
    Event,
    Field,
    Route,
    Slot,
    State,
    Workflow,
    real,
    subject,
    timeout,
    who,
)


class Delivery(Workflow):
    """A parcel is confirmed by finance; the warehouse's scans may come before they are awaited.

    ``received`` may be raised only by finance or a lead (its raisers), though support
    may hold the slot too; ``scanned`` arrives early and is kept (two per run, one day each).
    """

    name = "delivery"
    tracks = "parcel"
    correlate_by = subject.reference
    events = [
        Event("received", raisers=who.role("finance") | who.role("lead")),
        Event(
            "scanned",
            raisers=who.role("integration") | who.role("finance"),
            buffer=Buffer(max=2, for_=real.days(1)),
        ),
    ]

    announced = State(
        initial=True,
        slots=[
            Slot(
                "receive",
                waits_for="received",
                fields=[Field.text("note", required=False)],
                candidates=who.role("finance") | who.role("support"),
            )
        ],
        then=[Route("arrived")],
        # Nobody confirmed in time: the parcel is taken as arrived anyway.
        timeouts=[timeout(real.hours(4), move_to="arrived")],
    )
    arrived = State(
        slots=[Slot("scan", waits_for="scanned", fields=[Field.text("code")])],
        then=[Route("rescanned")],
    )
    rescanned = State(
        slots=[Slot("rescan", waits_for="scanned", fields=[Field.text("code")])],
        then=[Route("stored")],
    )
    stored = State(terminal=True)


class Signature(Workflow):
    """A contract signed through a link by the client, or by their named deputy."""

    name = "signature"
    tracks = "contract"

    waiting = State(
        initial=True,
        slots=[
            Slot(
                "sign",
                fields=[Field.choice("decision", ["sign", "decline"])],
                candidates=who.email(subject.client_email) | who.role("legal"),
                outsiders=who.email(subject.deputy_email),
                magic_link=True,
                label="Sign contract {subject.reference}",
                shareable=["reference"],
            )
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)


class Pinged(Workflow):
    """Finance approves, then a ping is awaited; an early ping is kept for one hour only."""

    name = "pinged"
    tracks = "ticket"
    events = [Event("ping", buffer=Buffer(max=1, for_=real.hours(1)))]

    waiting = State(
        initial=True,
        slots=[Slot("approve", waits_for="approved", candidates=who.role("finance"))],
        then=[Route("pinging")],
    )
    pinging = State(slots=[Slot("ping")], then=[Route("done")])
    done = State(terminal=True)
