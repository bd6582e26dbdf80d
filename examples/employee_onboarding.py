"""Employee onboarding: a saga. Laptop, accounts and badge are provisioned in parallel and
undone when the hire is withdrawn.

The story, as HR tells it:

1. HR records a new hire; the onboarding starts three requests at once, each a workflow
   of its own run by its own team: IT ships a laptop (``laptop-request``), IT opens the
   accounts (``accounts-request``), facilities issue a badge (``badge-request``).
2. When all three are done, the hire is ready for day one.
3. If the hire is withdrawn first (HR's ``withdraw`` move, or a cancelled onboarding), the
   requests still open are cancelled, and what was already done is undone, the last done
   first: the badge revoked (``badge-revocation``), the accounts closed
   (``accounts-closure``), the laptop returned (``laptop-return``). Each undo is a run of
   its own, on the team's list, and shows on the onboarding's timeline
   (``run.compensating``, ``run.compensated``) and in ``Run.compensations``.

Subject example::

    {"name": "Grace Hopper", "email": "grace@example.com", "start_date": "2027-01-04",
     "team": "platform"}
"""

from __future__ import annotations

from taskflow import Child, Field, Move, Slot, State, Workflow, payload, who

hr = who.role("hr")


def task(name: str, label: str, team: str) -> Slot:
    """The one slot of a step or an undo: ``team`` does it, noting a reference."""
    return Slot(
        name,
        label=label + " for {subject.name} (starts {subject.start_date})",
        fields=[Field.text("reference", required=False)],
        candidates=who.role(team),
    )


class LaptopRequest(Workflow):
    """A step: IT ships the hire a laptop."""

    name = "laptop-request"
    tracks = "hire"
    result = {"reference": payload.ship_laptop.reference}

    doing = State(initial=True, slots=[task("ship_laptop", "Ship a laptop", "it")], then="shipped")
    shipped = State(terminal=True)


class AccountsRequest(Workflow):
    """A step: IT opens the hire's accounts (mail, chat, code)."""

    name = "accounts-request"
    tracks = "hire"
    result = {"reference": payload.open_accounts.reference}

    doing = State(
        initial=True, slots=[task("open_accounts", "Open the accounts", "it")], then="opened"
    )
    opened = State(terminal=True)


class BadgeRequest(Workflow):
    """A step: facilities issue the hire's building badge."""

    name = "badge-request"
    tracks = "hire"
    result = {"reference": payload.issue_badge.reference}

    doing = State(
        initial=True, slots=[task("issue_badge", "Issue a badge", "facilities")], then="issued"
    )
    issued = State(terminal=True)


class LaptopReturn(Workflow):
    """The undo of ``laptop-request``: IT collects the laptop back."""

    name = "laptop-return"
    tracks = "hire"
    result = {"reference": payload.collect_laptop.reference}

    doing = State(
        initial=True,
        slots=[task("collect_laptop", "Collect the laptop", "it")],
        then="returned",
        moves=[Move("not_returned", to="unreturned", by=who.role("it"))],
    )
    returned = State(terminal=True)
    #: The hire kept it: the undo failed (tried again, then an operator's to settle).
    unreturned = State(terminal=True, failure="unreturned")


class AccountsClosure(Workflow):
    """The undo of ``accounts-request``: IT closes the accounts."""

    name = "accounts-closure"
    tracks = "hire"
    result = {"reference": payload.close_accounts.reference}

    doing = State(
        initial=True, slots=[task("close_accounts", "Close the accounts", "it")], then="closed"
    )
    closed = State(terminal=True)


class BadgeRevocation(Workflow):
    """The undo of ``badge-request``: facilities revoke the badge."""

    name = "badge-revocation"
    tracks = "hire"
    result = {"reference": payload.revoke_badge.reference}

    doing = State(
        initial=True, slots=[task("revoke_badge", "Revoke the badge", "facilities")], then="revoked"
    )
    revoked = State(terminal=True)


class EmployeeOnboarding(Workflow):
    """The saga: three steps in parallel, each with its undo; withdrawn, the done are undone."""

    name = "employee-onboarding"
    tracks = "hire"

    provisioning = State(
        initial=True,
        label="Laptop, accounts and badge",
        children=[
            Child("laptop-request", label="laptop", compensation="laptop-return"),
            Child("accounts-request", label="accounts", compensation="accounts-closure"),
            Child("badge-request", label="badge", compensation="badge-revocation"),
        ],
        then="ready",
        moves=[Move("withdraw", to="withdrawn", by=hr)],
    )
    ready = State(terminal=True, label="Ready for day one")
    withdrawn = State(terminal=True, label="Hire withdrawn")
