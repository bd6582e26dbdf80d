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

from typing import Any

from taskflow import Child, Field, Move, Slot, State, Workflow, payload, who

hr = who.role("hr")


def one_task(
    name: str, slot: str, label: str, team: str, done: str, fails: str | None = None
) -> type[Workflow]:
    """A workflow of one slot on the hire: ``team`` does ``label`` (noting a reference) and
    the run ends in ``done``. ``fails``: the team may also say it could not be done, a
    terminal state of that name that is a failure (for an undo that can fail)."""
    states: dict[str, Any] = {done: State(terminal=True)}
    moves = []
    if fails is not None:
        moves = [Move(f"not_{done}", to=fails, by=who.role(team))]
        states[fails] = State(terminal=True, failure=fails)
    task = Slot(
        slot,
        label=label + " for {subject.name} (starts {subject.start_date})",
        fields=[Field.text("reference", required=False)],
        candidates=who.role(team),
    )
    doing = State(initial=True, label=label, slots=[task], then=done, moves=moves)
    attributes = {"name": name, "tracks": "hire", "doing": doing, **states}
    attributes["result"] = {"reference": payload[slot].reference}
    attributes |= {"__module__": __name__, "__doc__": f"{label} (employee-onboarding's saga)."}
    return type(name.title().replace("-", ""), (Workflow,), attributes)


# The steps, each with its undo (the saga's compensation).
LaptopRequest = one_task("laptop-request", "ship_laptop", "Ship a laptop", "it", "shipped")
AccountsRequest = one_task("accounts-request", "open_accounts", "Open the accounts", "it", "opened")
BadgeRequest = one_task("badge-request", "issue_badge", "Issue a badge", "facilities", "issued")
#: The hire may keep the laptop: the undo then fails (``unreturned``), is tried again, and
#: at last needs an operator.
LaptopReturn = one_task(
    "laptop-return", "collect_laptop", "Collect the laptop", "it", "returned", "unreturned"
)
AccountsClosure = one_task(
    "accounts-closure", "close_accounts", "Close the accounts", "it", "closed"
)
BadgeRevocation = one_task(
    "badge-revocation", "revoke_badge", "Revoke the badge", "facilities", "revoked"
)


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
