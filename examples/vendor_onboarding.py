"""Vendor onboarding: a new supplier sends its documents, then legal and security sign off.

The story, as procurement tells it:

1. Procurement registers a new vendor. A quick automatic screen rejects a
   registration whose VAT number is not even well formed.
2. The vendor uploads each document we require from them (the list differs per
   vendor: a certificate of incorporation, bank details, an insurance
   certificate, a data processing agreement...). They have no account: each
   request reaches them as a link that opens a one-page form for that
   document only. Every 2 business days they are reminded of what is still
   missing, each reminder with a fresh link (the mailer mints it as it sends).
   Procurement staff may upload a document on their behalf. A request expires
   after 21 days: two days before, the vendor is told it "expires in 2 days",
   with a fresh link; once it has expired its links stop working and the
   onboarding ends as expired.
3. Once every document is in, legal reviews the set.
4. If the vendor will handle personal data, the onboarding starts a
   security assessment: a workflow of its own (``security-assessment``, below),
   run by the security team on its own SLA, and waits for it. Its verdict comes
   back as data (``child("assessment").result.verdict``); an assessment that
   expires sends the onboarding to ``expired`` (caught), one cancelled by
   security cancels the onboarding (uncaught), naming why.
5. Legal (and security, when asked) approve: the vendor is onboarded. Either
   rejects: the vendor is told no. If it all takes more than 30 days, the
   onboarding expires and procurement starts again when the vendor is ready.

Subject example::

    {"vendor_number": "V-20931", "legal_name": "Acme Logistics GmbH", "country": "DE",
     "vat_number": "DE123456789", "contact_email": "onboarding@acme.example",
     "contact_name": "Anna Acme",
     "required_documents": ["certificate of incorporation", "bank details", "insurance"],
     "handles_personal_data": true}
"""

from __future__ import annotations

import re

from taskflow import (
    Catch,
    Child,
    Expr,
    Field,
    HookContext,
    Move,
    Route,
    Slot,
    State,
    Workflow,
    business,
    child,
    expire,
    milestone,
    payload,
    real,
    reminder,
    subject,
    timeout,
    who,
)
from taskflow import expired as lapsed  # the expired.<slot> counts (a state is named expired)

#: The vendor's contact: reached by e-mail, acting through single-use links.
vendor = who.email(subject.contact_email, name=subject.contact_name)
procurement = who.role("procurement")

#: Two letters of country, then 2 to 12 letters or digits (the EU VAT number shape).
VAT_NUMBER = re.compile(r"[A-Z]{2}[0-9A-Z]{2,12}")


def screen_registration(ctx: HookContext) -> str | None:
    """Reject at once a registration whose VAT number cannot be valid; else carry on.

    A hook, not a condition, because a pattern check is beyond what conditions express.
    """
    vat = str(ctx.subject.get("vat_number", "")).replace(" ", "").upper()
    return None if VAT_NUMBER.fullmatch(vat) else "rejected"


def review_slot(name: str, team: str, armed: Expr | None = None) -> Slot:
    """A sign-off by ``team`` once every document is in (only when ``armed`` holds, if given)."""
    return Slot(
        name,
        waits_for=f"{team}-reviewed",  # a distinct event per review, so each is unambiguous
        label=f"{team.capitalize()} review of {{subject.legal_name}} ({{subject.vendor_number}})",
        fields=[
            Field.choice("decision", ["approve", "reject"]),
            Field.text("notes", required=False),
        ],
        candidates=who.role(team),
        delegates=who.role(f"{team}-lead"),
        after=["upload"],  # pending until every document is uploaded
        armed=armed,
        milestones=[
            milestone.assigned(within=business.days(1)),
            milestone.finished(within=business.days(5)),
        ],
        reminders=[
            reminder.at(0.8, of="finished", notify=who.holder()),
            reminder.on_breach("finished", escalate_to=who.role(f"{team}-lead")),
        ],
    )


class SecurityAssessment(Workflow):
    """The security team assesses a vendor that will handle personal data (its own SLA).

    Started by ``vendor-onboarding`` (as its child ``assessment``) on the same vendor; it
    hands back its verdict and risk as its result. Ten business days without a verdict
    and it expires: a failure its parent catches.
    """

    name = "security-assessment"
    version = 1
    tracks = "vendor"
    calendar = "de-berlin"
    result = {"verdict": payload.assess.verdict, "risk": payload.assess.risk}

    assessing = State(
        initial=True,
        label="Security assessment",
        slots=[
            Slot(
                "assess",
                waits_for="security-assessed",
                label="Assess the security of {subject.legal_name} ({subject.vendor_number})",
                fields=[
                    Field.choice("verdict", ["approve", "reject"]),
                    Field.choice("risk", ["low", "medium", "high"]),
                    Field.text("notes", required=False),
                ],
                candidates=who.role("security"),
                delegates=who.role("security-lead"),
                milestones=[
                    milestone.assigned(within=business.hours(4)),
                    milestone.finished(within=business.days(3)),
                ],
                reminders=[
                    reminder.at(0.8, of="finished", notify=who.holder()),
                    reminder.on_breach("finished", escalate_to=who.role("security-lead")),
                ],
            )
        ],
        then="assessed",
        timeouts=[
            timeout(
                business.days(10),
                name="expiry",
                notify=who.role("security-lead"),
                move_to="expired",
            )
        ],
    )
    assessed = State(terminal=True, label="Assessed")
    #: Reaching it fails the assessment: its parent's ``catch`` decides what follows.
    expired = State(terminal=True, label="Expired", failure="expired")


class VendorOnboarding(Workflow):
    """A vendor uploads its documents by link; legal approves, and security assesses vendors
    handling personal data (a child run of ``security-assessment``)."""

    name = "vendor-onboarding"
    version = 2
    tracks = "vendor"
    calendar = "de-berlin"  # procurement sits in Berlin
    correlate_by = subject.vendor_number

    registered = State(
        initial=True,
        label="Screening",
        on_enter=screen_registration,
        redirects=["rejected"],
        then=[Route("collecting")],  # no slots: straight on, unless the screen redirected
    )

    collecting = State(
        label="Documents and reviews",
        slots=[
            Slot(
                "upload",
                waits_for="document-uploaded",
                foreach=subject.required_documents,  # one slot per required document
                label="Upload {item} for {subject.legal_name}",
                fields=[
                    # The document itself (a PDF or a scan), judged by its bytes: only a
                    # file uploaded by whoever completes (the vendor through the link, or
                    # staff), never a name or a link typed in.
                    Field.upload(
                        "document",
                        ["application/pdf", "image/png", "image/jpeg"],
                        max_bytes=10 * 1024 * 1024,
                        max_files=3,
                    ),
                    Field.date("valid_until", required=False),
                ],
                candidates=vendor | procurement,
                magic_link=True,  # the vendor completes it from the link in our e-mail
                shareable=["legal_name", "vendor_number"],  # all the vendor's page may show
                milestones=[milestone.finished(within=business.days(10))],
                reminders=[
                    reminder.after(
                        business.days(2),
                        every=business.days(2),
                        notify=vendor,
                        with_link=True,  # the mailer mints a link as it sends the reminder
                        quiet_hours=True,  # in Berlin office hours, never at 3 am
                    ),
                    reminder.on_breach("finished", notify=procurement),
                ],
                # A document request lapses after three weeks (docs/sla.md, "Expiry").
                expires=expire.after(
                    real.days(21),
                    warn=[expire.warning(real.days(2), notify=vendor, with_link=True)],
                ),
            ),
            review_slot("legal_review", "legal"),
        ],
        then=[
            Route("expired", when=lapsed.upload > 0),  # a document request lapsed
            Route("rejected", when=payload.legal_review.decision == "reject"),
            # Only vendors who will touch personal data need the security assessment.
            Route("assessing", when=subject.handles_personal_data),
            Route("onboarded"),
        ],
        moves=[Move("cancel", to="cancelled", by=procurement, fields=[Field.text("reason")])],
        # The whole onboarding must be done within 30 calendar days.
        timeouts=[timeout(real.days(30), name="expiry", notify=procurement, move_to="expired")],
    )

    assessing = State(
        label="Security assessment",
        children=[Child("security-assessment", label="assessment")],
        then=[
            Route("onboarded", when=child("assessment").result.verdict == "approve"),
            Route("rejected"),
        ],
        catch=[Catch("expired", kinds=["expired"])],
        moves=[Move("cancel", to="cancelled", by=procurement, fields=[Field.text("reason")])],
    )

    onboarded = State(terminal=True, label="Onboarded")
    rejected = State(terminal=True, label="Rejected")
    expired = State(terminal=True, label="Expired")
    cancelled = State(terminal=True, label="Cancelled")
