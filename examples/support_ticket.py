"""Support ticket: triage, a first response and a resolution, each against the ticket's priority.

The story, as the support team tells it:

1. A new ticket is triaged by the on-duty triage desk: confirm the priority,
   pick a category, or close it as spam.
2. The owning team (the ticket's ``team``) then owes the customer a first
   response and a resolution. How long they have depends on the priority:

   ========  ========================  ===========================
   priority  first response            resolution
   ========  ========================  ===========================
   P1        1 hour, round the clock   8 hours, round the clock
   P2        4 business hours          2 business days
   P3        1 business day            5 business days
   P4        2 business days           10 business days
   ========  ========================  ===========================

   P1 runs on the ``24x7`` calendar (every hour counts, nights and weekends
   included); P2-P4 run on the team's business hours (``uk-london``).
   Whoever holds a ticket is reminded at 75 % of the time; on a breach the
   team lead is brought in.
3. While the team waits for the customer ("can you send a screenshot?"),
   the ticket sits in *waiting for customer*: the SLA clocks stop, and start
   again where they stopped when the customer replies (by e-mail, or through
   the link in our message). A silent customer is sent a follow-up every week
   (an automatic step), four times; after 29 days of silence the ticket closes.
4. A resolved ticket closes itself after 7 days unless the customer reopens it.
5. The customer's contract may promise a resolution date (``due_date``, sent with the
   ticket): the whole ticket, across its states, is due at the end of that business day
   in London. The team hears when it is at risk; a missed date brings in the team lead.
   A ticket without one has no such deadline.

The help desk never calls ``startRun``: it sends each new ticket with
``upsertSubject`` and the workflow, which owns tickets, starts on it; the ticket then
reads the run's state as ``status`` (read-only). If the triage desk changes the
priority, the help desk updates the ticket (``updateSubject``) and taskflow recomputes
the budgets, keeping the time already spent. Subject example::

    {"reference": "T-81723", "title": "Cannot export invoices", "priority": "P2",
     "team": "billing-support", "customer_email": "ana@example.com",
     "due_date": "2026-12-04"}
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from taskflow import (
    Deadline,
    Field,
    Move,
    Owns,
    Precondition,
    Route,
    Slot,
    State,
    Undoable,
    Workflow,
    budget_by,
    business,
    every,
    milestone,
    payload,
    priority_by,
    real,
    reminder,
    subject,
    timeout,
    who,
)

log = logging.getLogger("taskflow.examples.support")


async def follow_up(ctx: Any) -> dict[str, Any]:
    """Remind a silent customer that we wait for their answer.

    A real deployment calls its help desk here (which sends the e-mail); the example
    logs it. The result (who was reminded) is on the run's timeline and in ``Run.steps``.
    """
    to = ctx.subject.get("customer_email")
    log.info("follow-up about %s to %s", ctx.subject.get("reference"), to)
    return {"to": to, "reference": ctx.subject.get("reference")}


#: P1 is measured round the clock: the 24x7 calendar counts every hour.
ROUND_THE_CLOCK = "24x7"

#: How urgent each priority is in inboxes (1 = top).
URGENCY = priority_by(subject.priority, {"P1": 1, "P2": 2, "P3": 3, "P4": 4}, default=3)

#: The team that owns the ticket, and its lead (escalations go there).
team = who.group(subject.team)
team_lead = who.role("support-lead") & who.group(subject.team)

#: The customer, who answers through a link and never signs in.
customer = who.email(subject.customer_email)

FIRST_RESPONSE = budget_by(
    subject.priority,
    {
        "P1": business.hours(1, calendar=ROUND_THE_CLOCK),
        "P2": business.hours(4),
        "P3": business.days(1),
        "P4": business.days(2),
    },
    default=business.days(1),  # an unknown priority is treated as P3
)

RESOLUTION = budget_by(
    subject.priority,
    {
        "P1": business.hours(8, calendar=ROUND_THE_CLOCK),
        "P2": business.days(2),
        "P3": business.days(5),
        "P4": business.days(10),
    },
    default=business.days(5),
)

#: Reminders shared by the two customer-facing slots.
ON_TIME_REMINDERS = [
    reminder.at(0.75, of="finished", notify=who.holder() | team),
    reminder.on_breach(
        "finished",
        notify=who.holder(),
        escalate_to=team_lead,  # the lead can take it or hand it to someone free
        every=business.hours(4),  # and keep reminding every 4 hours until it is done
    ),
]


class SupportTicket(Workflow):
    """A customer ticket: triage, first response and resolution on priority-based SLAs."""

    name = "support-ticket"
    version = 1
    tracks = "ticket"
    calendar = "uk-london"  # the support teams' business hours
    correlate_by = subject.reference  # e-mails quote [T-81723] in their subject line
    # A new ticket (upsertSubject) starts its run; the run's state reads as ticket.status.
    owns = Owns(field="status")
    # The date the customer's contract promises: the end of that business day in London.
    deadline = Deadline(
        at=subject.due_date, calendar="uk-london", notify_at_risk=team, notify=team_lead
    )

    new = State(
        initial=True,
        label="Triage",
        slots=[
            Slot(
                "triage",
                waits_for="triaged",
                label="Triage {subject.reference}: {subject.title}",
                fields=[
                    Field.choice("priority", ["P1", "P2", "P3", "P4"]),
                    Field.choice("category", ["question", "bug", "billing", "outage", "spam"]),
                ],
                candidates=who.role("support-triage"),
                priority=URGENCY,
                milestones=[
                    milestone.finished(within=business.minutes(30, calendar=ROUND_THE_CLOCK))
                ],
                reminders=[reminder.on_breach("finished", notify=who.role("support-triage"))],
            )
        ],
        then=[
            Route("closed", when=payload.triage.category == "spam"),
            Route("open"),
        ],
        # A triager who chose the wrong priority takes it back within ten minutes.
        undoable=Undoable(within=timedelta(minutes=10), same_actor=True),
    )

    open = State(
        label="With the team",
        slots=[
            Slot(
                "first_response",
                waits_for="responded",
                label="Answer {subject.reference} ({subject.priority}): {subject.title}",
                fields=[Field.text("message")],
                candidates=team,
                delegates=team_lead,
                priority=URGENCY,
                milestones=[
                    milestone.assigned(within=business.minutes(30, calendar=ROUND_THE_CLOCK)),
                    milestone.finished(within=FIRST_RESPONSE),
                ],
                reminders=ON_TIME_REMINDERS,
            ),
            Slot(
                "resolution",
                waits_for="resolved",
                label="Resolve {subject.reference} ({subject.priority}): {subject.title}",
                fields=[
                    Field.choice("outcome", ["fixed", "answered", "workaround", "wont-fix"]),
                    Field.text("summary"),
                ],
                candidates=team,
                delegates=team_lead,
                priority=URGENCY,
                milestones=[milestone.finished(within=RESOLUTION)],
                reminders=ON_TIME_REMINDERS,
            ),
        ],
        then=[Route("resolved")],
        moves=[
            # Asking the customer something stops the clocks until they answer.
            Move(
                "ask_customer",
                to="waiting_for_customer",
                by=team,
                fields=[Field.text("question")],
                undoable=Undoable(within=timedelta(minutes=15), by=team),
            ),
        ],
    )

    waiting_for_customer = State(
        label="Waiting for the customer",
        pausing=True,  # SLA clocks of the ticket stand still here
        slots=[
            Slot(
                "customer_reply",
                waits_for="customer-replied",
                label="Reply about {subject.reference}: {subject.title}",
                fields=[Field.text("reply"), Field.file("attachment", required=False)],
                # The help desk raises the event when the customer e-mails back; the customer
                # can also answer through a link, which shows them only these fields.
                candidates=who.role("helpdesk-integration") | customer,
                magic_link=True,
                shareable=["reference", "title"],
            )
        ],
        then=[Route("open")],
        # A follow-up every week while the customer stays silent, four times; then closed.
        every=[every(real.days(7), action=follow_up, until=real.days(28))],
        timeouts=[timeout(real.days(29), notify=team, move_to="closed")],
    )

    resolved = State(
        label="Resolved",
        # What the card of a resolved ticket checks off before it closes.
        preconditions=[
            Precondition("resolution summary written", payload.resolution.summary.is_set())
        ],
        moves=[Move("reopen", to="open", by=who.role("helpdesk-integration") | team)],
        timeouts=[timeout(real.days(7), move_to="closed")],
    )

    closed = State(terminal=True, label="Closed")
