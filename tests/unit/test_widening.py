"""Escalations and reassignments keep every exclusion of the candidate rule they widen."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from taskflow import who
from taskflow.core.clocks import firing
from taskflow.core.definition import audience as au
from taskflow.core.definition import sla
from taskflow.core.definition.conditions.expr import subject
from taskflow.core.runs import engine
from taskflow.service.versions import definitions

CATALOG = definitions.load_from_env({})
EXPENSE = CATALOG.get("expense-approval")
NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)
CLAIM = {
    "reference": "EXP-1",
    "amount": 1250.0,
    "currency": "GBP",
    "submitted_by": "leah",
    "department": "finance",
    "receipts": 1,
}
LEAH = au.principal_keys({"id": "leah", "roles": ["finance", "finance-lead", "lead"]})
LENA = au.principal_keys({"id": "lena", "roles": ["finance-lead"]})
FIONA = au.principal_keys({"id": "fiona", "roles": ["finance"]})
SAM = au.principal_keys({"id": "sam", "roles": ["employee"]})

SUBMITTER = who.id(subject.submitted_by)


def test_exclusions_are_the_top_level_subtractions() -> None:
    rule = who.role("finance") - SUBMITTER - who.role("intern")
    assert [au.describe(e) for e in au.exclusions(rule)] == [
        au.describe(au.Combine("not", (SUBMITTER,))),
        au.describe(au.Combine("not", (who.role("intern"),))),
    ]
    assert len(au.exclusions(who.role("a") & (who.attr("r") == "x") - SUBMITTER)) == 1
    # An exclusion inside one branch of an "or" narrows that branch only.
    assert au.exclusions((who.role("a") - SUBMITTER) | who.role("b")) == ()
    assert au.exclusions(who.role("a")) == ()


def test_a_widened_rule_keeps_out_whom_the_rule_excluded() -> None:
    widened = au.compile(au.widen(who.role("finance") - SUBMITTER, who.role("finance-lead")), CLAIM)
    assert not widened.admits(LEAH)
    assert widened.admits(LENA)
    assert widened.admits(FIONA)
    assert not widened.admits(SAM)
    # Nothing to keep: the plain union; nothing declared: only what is added.
    assert au.compile(au.widen(who.role("a"), who.role("b")), {}).keys == {"role:a", "role:b"}
    assert au.compile(au.widen(None, who.role("b")), {}).keys == {"role:b"}


def _review() -> tuple[engine.Outcome, firing.Effects]:
    counter = itertools.count(1)
    out = engine.start(
        EXPENSE,
        run_id="run-1",
        subject=CLAIM,
        now=NOW,
        actor="app",
        new_id=lambda: f"id-{next(counter)}",
    )
    [slot] = [s for s in out.created if s.name == "finance_review"]
    decl = EXPENSE.slot("submitted", "finance_review")
    effects = firing.effects(
        out.run,
        slot,
        decl,
        sla.actions(escalate_to=who.role("finance-lead")),
        message="not picked up in time",
        now=NOW,
    )
    return out, effects


def test_the_expense_escalation_adds_the_finance_leads_but_not_the_submitter() -> None:
    _, effects = _review()
    assert effects.slot is not None
    assert effects.slot.audience.admits(LENA)
    assert effects.slot.audience.admits(FIONA)
    assert not effects.slot.audience.admits(LEAH)


def test_a_reassignment_keeps_the_exclusions_and_never_hands_the_slot_to_the_excluded() -> None:
    out, _ = _review()
    [slot] = [s for s in out.created if s.name == "finance_review"]
    decl = EXPENSE.slot("submitted", "finance_review")

    pooled = firing.effects(
        out.run, slot, decl, sla.actions(reassign_to=who.role("finance-lead")), message="m", now=NOW
    )
    assert pooled.slot is not None
    assert pooled.slot.audience.admits(LENA)
    assert not pooled.slot.audience.admits(LEAH)

    to_her = firing.effects(
        out.run, slot, decl, sla.actions(reassign_to=who.id("leah")), message="m", now=NOW
    )
    assert to_her.slot == slot  # unchanged: not held by the submitter
    assert [e.kind for e in to_her.audit] == ["slot.reassign_skipped"]

    to_lena = firing.effects(
        out.run, slot, decl, sla.actions(reassign_to=who.id("lena")), message="m", now=NOW
    )
    assert to_lena.slot is not None
    assert to_lena.slot.holder == "lena"
