"""The one rule that says whether an endpoint's owner may still receive an event, and who
manages an endpoint (``core/access/access.py``; docs/security.md, "Who an endpoint belongs to")."""

from __future__ import annotations

from taskflow.core.access import access
from taskflow.core.access.principals import Grant, Principal

ADA = Principal("ada", "Ada", roles=("admin",))
LEAH = Principal("leah", "Leah", powers=(Grant("lead", ("expense-approval",)),))
TARA = Principal(
    "tara", "Tara", powers=(Grant("lead", ("support-ticket",), ("group:billing-support",)),)
)
MAX = Principal("max", "Max", powers=(Grant("manager"),))


def test_an_active_owner_granted_the_workflow_whole_receives_its_events() -> None:
    assert access.webhook_owner_refusal("ada", ADA, "support-ticket") is None
    assert access.webhook_owner_refusal("leah", LEAH, "expense-approval") is None


def test_a_deactivated_or_unknown_owner_receives_nothing() -> None:
    gone = Principal("ada", "Ada", roles=("admin",), active=False)
    for owner in (gone, None):
        why = access.webhook_owner_refusal("ada", owner, "expense-approval")
        assert why is not None
        assert why.startswith("owner-deactivated: ")


def test_an_owner_without_the_whole_workflow_lost_access() -> None:
    # Another workflow, a team grant, a manager (managers create no endpoints), no grant.
    cases = (
        (LEAH, "support-ticket"),
        (TARA, "support-ticket"),
        (MAX, "expense-approval"),
        (Principal("leah", "Leah", roles=("lead",)), "expense-approval"),
    )
    for owner, workflow in cases:
        why = access.webhook_owner_refusal(owner.id, owner, workflow)
        assert why is not None, (owner.id, workflow)
        assert why.startswith("owner-lost-access: "), why
        assert repr(workflow) in why


def test_admins_manage_every_endpoint_and_a_lead_only_their_own() -> None:
    assert access.may_manage_webhook(ADA, "leah", ("expense-approval",))
    assert access.may_manage_webhook(LEAH, "leah", ("expense-approval",))
    assert not access.may_manage_webhook(LEAH, "ada", ("expense-approval",))
    assert not access.may_manage_webhook(LEAH, "olga", ("expense-approval",))
    # Their own, pointed beyond their grants (by an admin): no longer theirs to manage.
    assert not access.may_manage_webhook(LEAH, "leah", ())
    assert not access.may_manage_webhook(LEAH, "leah", ("expense-approval", "support-ticket"))
