"""Workflows of the expiry tests: a quote that expires after three days (reopened once,
then escalated) and an offer that expires at the date its subject names."""

from __future__ import annotations

from taskflow import Field, Move, Route, Slot, State, Workflow, expire, expired, real, subject, who


class Quote(Workflow):
    """Finance (or the client, by link) signs a quote within three days; reopened once."""

    name = "quote"
    tracks = "quote"

    signing = State(
        initial=True,
        slots=[
            Slot(
                "sign",
                fields=[Field.text("note", required=False)],
                candidates=who.role("finance") | who.email(subject.client_email),
                magic_link=True,
                label="Sign quote {subject.reference}",
                shareable=["reference"],
                expires=expire.after(
                    real.days(3),
                    warn=[
                        expire.warning(
                            real.days(1), notify=who.email(subject.client_email), with_link=True
                        )
                    ],
                ),
            )
        ],
        then=[
            Route("signing", when=expired.sign == 1),
            Route("escalated", when=expired.sign >= 2),
            Route("signed"),
        ],
        moves=[Move("ask_client", to="asking")],
    )
    #: Waiting for the client's question to be answered: the quote is held, it does not expire.
    asking = State(pausing=True, moves=[Move("answered", to="signing")])
    escalated = State(terminal=True)
    signed = State(terminal=True)


class Offer(Workflow):
    """An offer accepted by finance before the date it is valid until (Berlin time)."""

    name = "offer"
    tracks = "offer"
    calendar = "de-berlin"  # the SLA report measures its slots on it
    subject_gone = "withdrawn"  # a deleted offer is withdrawn, not cancelled

    open = State(
        initial=True,
        slots=[
            Slot(
                "accept",
                candidates=who.role("finance"),
                expires=expire.at(subject.offer_valid_until, zone="Europe/Berlin"),
            )
        ],
        then=[Route("lapsed", when=expired.accept > 0), Route("accepted")],
    )
    lapsed = State(terminal=True)
    accepted = State(terminal=True)
    withdrawn = State(terminal=True)
