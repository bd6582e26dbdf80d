"""The bundled examples load, validate, and mean what their stories say."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pytest

from taskflow.config import config
from taskflow.core.definition import HookContext, audience, runtime, sla
from taskflow.core.definition.budgets import ResolvedBudget, resolve_budget
from taskflow.core.definition.checks import validate as validation
from taskflow.core.definition.conditions.expr import Env
from taskflow.core.definition.labels import render_label
from taskflow.core.definition.workflow import Definition
from taskflow.service.versions import definitions
from tests.example_names import EXAMPLE_WORKFLOWS

CATALOG = definitions.load_from_env({})
CALENDARS = definitions.calendar_names(config.PROJECT_ROOT / "calendars")


def compiled(
    d: Definition, state: str, slot: str, subject: Mapping[str, Any], item: object = None
) -> tuple[list[str], list[str]]:
    who = d.slot(state, slot).candidates
    assert who is not None
    aud = audience.compile(who, subject, item)
    return sorted(aud.keys), [str(r) for r in aud.residual]


def test_the_examples_load_and_validate() -> None:
    assert CATALOG.names() == EXAMPLE_WORKFLOWS
    for definition in CATALOG:
        assert validation.problems(definition, CALENDARS) == []
        assert definition.to_document()["name"] == definition.name


# -- expense approval ---------------------------------------------------------------------------

EXPENSE = CATALOG.get("expense-approval")
CLAIM = {"reference": "EXP-7", "amount": 1250.0, "currency": "GBP", "submitted_by": "bob"}


def test_expense_finance_review_is_finance_but_not_the_submitter() -> None:
    assert compiled(EXPENSE, "submitted", "finance_review", CLAIM) == (
        ["role:finance"],
        ["not user:bob"],
    )


def test_expense_manager_is_found_by_an_attribute_rule() -> None:
    assert compiled(EXPENSE, "manager_approval", "manager_approval", CLAIM) == (
        ["attr:reports=bob"],
        ["not user:bob"],
    )
    manager = {"id": "maria", "attributes": {"reports": ["bob", "carl"]}}
    who = EXPENSE.slot("manager_approval", "manager_approval").candidates
    assert who is not None
    assert audience.matches(who, manager, CLAIM)


@pytest.mark.parametrize(
    ("decision", "amount", "target"),
    [
        ("reject", 5000, "rejected"),
        ("query", 5000, "awaiting_answer"),
        ("approve", 5000, "manager_approval"),
        ("approve", 1000, "payment"),
    ],
)
def test_expense_routes(decision: str, amount: int, target: str) -> None:
    env = Env(
        subject={**CLAIM, "amount": amount}, payload={"finance_review": {"decision": decision}}
    )
    assert runtime.choose_route(EXPENSE.state("submitted"), env) == target


def test_expense_budgets_and_reminders() -> None:
    slot = EXPENSE.slot("submitted", "finance_review")
    assigned, finished = slot.milestone("assigned"), slot.milestone("finished")
    assert assigned is not None
    assert finished is not None
    assert resolve_budget(assigned.within, CLAIM, EXPENSE.calendar) == ResolvedBudget(
        "business", timedelta(hours=4), "uk-london"
    )
    done = resolve_budget(finished.within, CLAIM, EXPENSE.calendar)
    assert done is not None
    assert (done.working_days, done.calendar) == (2, "uk-london")
    assert [r.describe() for r in slot.reminders] == [
        "at 75% of the finished budget: notify holder or candidates",
        "on breach of assigned: escalate to role:finance-lead",
        "on breach of finished: notify role:finance-lead, raise priority to 1",
    ]
    assert render_label(slot.label or "", CLAIM) == "Review expense EXP-7: 1,250.00 GBP"


# -- support ticket -----------------------------------------------------------------------------

SUPPORT = CATALOG.get("support-ticket")
TICKET = {
    "reference": "T-1",
    "title": "Export fails",
    "priority": "P1",
    "team": "billing",
    "customer_email": "ana@example.com",
}


def test_support_budgets_follow_priority() -> None:
    within = SUPPORT.slot("open", "first_response").milestone("finished")
    assert within is not None
    p1 = resolve_budget(within.within, TICKET, SUPPORT.calendar)
    assert p1 == ResolvedBudget("business", timedelta(hours=1), "24x7")
    p2 = resolve_budget(within.within, {**TICKET, "priority": "P2"}, SUPPORT.calendar)
    assert p2 == ResolvedBudget("business", timedelta(hours=4), "uk-london")
    slot = SUPPORT.slot("open", "first_response")
    assert sla.resolve_priority(slot.priority_rule, TICKET) == 1


def test_support_audiences_team_lead_and_customer() -> None:
    assert compiled(SUPPORT, "open", "resolution", TICKET) == (["group:billing"], [])
    lead = SUPPORT.slot("open", "resolution").delegates
    assert lead is not None
    assert str(audience.compile(lead, TICKET)) == "any of group:billing, and role:support-lead"
    assert compiled(SUPPORT, "waiting_for_customer", "customer_reply", TICKET) == (
        ["email:ana@example.com", "role:helpdesk-integration"],
        [],
    )


def test_support_waiting_for_customer_pauses_clocks() -> None:
    waiting = SUPPORT.state("waiting_for_customer")
    assert waiting.pausing
    assert waiting.slot("customer_reply").magic_link
    assert [s.name for s in SUPPORT.states if s.pausing] == ["waiting_for_customer"]


# -- vendor onboarding --------------------------------------------------------------------------

VENDOR = CATALOG.get("vendor-onboarding")
SUPPLIER = {
    "vendor_number": "V-1",
    "legal_name": "Acme GmbH",
    "vat_number": "DE123456789",
    "contact_email": "v@acme.example",
    "required_documents": ["bank details", "insurance"],
    "handles_personal_data": False,
}


def test_vendor_uploads_one_slot_per_document_by_magic_link() -> None:
    upload = VENDOR.slot("collecting", "upload")
    assert runtime.foreach_items(upload, SUPPLIER) == ["bank details", "insurance"]
    assert upload.magic_link
    assert (
        render_label(upload.label or "", SUPPLIER, "insurance") == "Upload insurance for Acme GmbH"
    )
    assert compiled(VENDOR, "collecting", "upload", SUPPLIER, "insurance") == (
        ["email:v@acme.example", "role:procurement"],
        [],
    )
    reminders = upload.reminders
    assert reminders[0].describe() == (
        "2 business days after the slot opens (finished), then every 2 business days: "
        "notify email:{subject.contact_email} with a link"
    )


def test_vendor_reviews_wait_for_documents_and_security_is_a_child_for_personal_data() -> None:
    legal = VENDOR.slot("collecting", "legal_review")
    assert legal.after == ("upload",)
    assert runtime.is_armed(legal, Env(subject=SUPPLIER))
    collecting = VENDOR.state("collecting")
    personal = Env(subject={**SUPPLIER, "handles_personal_data": True})
    assert runtime.choose_route(collecting, Env(subject=SUPPLIER)) == "onboarded"
    assert runtime.choose_route(collecting, personal) == "assessing"
    [assessment] = VENDOR.state("assessing").children
    assert (assessment.workflow, assessment.label, assessment.awaited) == (
        "security-assessment",
        "assessment",
        True,
    )
    assert CATALOG.get("security-assessment").state("expired").failure == "expired"


def test_vendor_expires_after_30_days_and_screens_vat_numbers() -> None:
    (expiry,) = VENDOR.state("collecting").timeouts
    assert expiry.describe() == "after 30 real days: notify role:procurement, move to expired"
    screen = VENDOR.state("registered").on_enter
    assert screen is not None
    ctx = HookContext(workflow="vendor-onboarding", state="registered", subject=SUPPLIER)
    assert screen(ctx) is None
    bad = HookContext(workflow="vendor-onboarding", state="registered", subject={"vat_number": "?"})
    assert screen(bad) == "rejected"
