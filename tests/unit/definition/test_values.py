"""Budgets, payload fields, labels and priorities: the small values slots are made of."""

from __future__ import annotations

from datetime import timedelta

import pytest

from taskflow.core.definition import sla
from taskflow.core.definition.budgets import (
    ResolvedBudget,
    budget_by,
    business,
    real,
    resolve_budget,
)
from taskflow.core.definition.conditions.expr import subject
from taskflow.core.definition.fields import Field, PayloadError, validate_payload
from taskflow.core.definition.labels import render_label

# -- budgets ------------------------------------------------------------------------------------


def test_business_hours_inherit_the_calendar() -> None:
    assert resolve_budget(business.hours(4), {}, "uk-london") == ResolvedBudget(
        "business", timedelta(hours=4), "uk-london"
    )


def test_budget_calendar_overrides_the_inherited_one() -> None:
    resolved = resolve_budget(business.minutes(30, calendar="24x7"), {}, "uk-london")
    assert resolved == ResolvedBudget("business", timedelta(minutes=30), "24x7")


def test_real_time_has_no_calendar_and_24_hour_days() -> None:
    assert resolve_budget(real.days(2), {}, "uk-london") == ResolvedBudget(
        "real", timedelta(days=2), None
    )
    with pytest.raises(ValueError, match="real time runs on no calendar"):
        real.hours(1, calendar="uk-london")


def test_business_days_are_working_days_of_the_calendars_length() -> None:
    resolved = resolve_budget(business.days(2), {}, "uk-london")
    assert resolved is not None
    assert resolved.working_days == 2
    # uk-london works 09:00-17:30: two working days are 17 business hours.
    assert resolved.business_time(timedelta(hours=8, minutes=30)) == timedelta(hours=17)
    assert resolved.describe() == "2 working days business time on uk-london"


def test_budget_table_by_subject_field() -> None:
    table = budget_by(
        subject.priority,
        {"P1": real.hours(1), "P2": business.hours(4)},
        default=business.days(2),
    )
    p1 = resolve_budget(table, {"priority": "P1"}, "uk-london")
    assert p1 == ResolvedBudget("real", timedelta(hours=1), None)
    p2 = resolve_budget(table, {"priority": "P2"}, "uk-london")
    assert p2 is not None
    assert p2.duration == timedelta(hours=4)
    other = resolve_budget(table, {"priority": "P9"}, "uk-london")
    assert other is not None
    assert other.working_days == 2
    assert resolve_budget(budget_by(subject.priority, {"P1": real.hours(1)}), {}, None) is None


def test_budget_descriptions() -> None:
    assert str(business.hours(1)) == "1 business hour"
    assert str(business.days(2, calendar="de-berlin")) == "2 business days on de-berlin"
    assert str(budget_by(subject.p, {"P1": real.hours(1)})) == "by subject.p (P1: 1 real hour)"


# -- payload fields -----------------------------------------------------------------------------

FIELDS = [
    Field.choice("decision", ["approve", "reject"]),
    Field.text("comment", required=False),
    Field.number("amount", required=False),
    Field.integer("count", required=False),
    Field.boolean("urgent", required=False),
    Field.date("due", required=False),
    Field.url("link", required=False),
    Field.file("receipt", required=False),
]


def test_valid_payload_is_cleaned_to_typed_json_values() -> None:
    cleaned = validate_payload(
        FIELDS,
        {
            "decision": "approve",
            "amount": "12.50",
            "count": "3",
            "urgent": "on",
            "due": "2026-12-01",
            "link": "https://example.com/x",
            "comment": "",
        },
    )
    assert cleaned == {
        "decision": "approve",
        "amount": 12.5,
        "count": 3,
        "urgent": True,
        "due": "2026-12-01",
        "link": "https://example.com/x",
    }


def test_every_wrong_field_is_named_with_the_reason() -> None:
    with pytest.raises(PayloadError) as caught:
        validate_payload(
            FIELDS,
            {"amount": "lots", "count": 1.5, "due": "1/12/2026", "link": "ftp://x", "extra": 1},
        )
    reasons = {p.field: p.reason for p in caught.value.problems}
    assert reasons == {
        "decision": "is required",
        "amount": "expected a number, got 'lots'",
        "count": "expected a whole number, got 1.5",
        "due": "expected a date written YYYY-MM-DD, got '1/12/2026'",
        "link": "expected an http(s) URL, got 'ftp://x'",
        "extra": "not a field of this slot (it takes amount, comment, count, decision, due, "
        "link, receipt, urgent)",
    }
    assert caught.value.code == "PAYLOAD_INVALID"
    assert "decision: is required" in caught.value.message


def test_choice_lists_the_choices() -> None:
    with pytest.raises(PayloadError, match="expected one of approve, reject, got 'maybe'"):
        validate_payload(FIELDS, {"decision": "maybe"})


# -- labels -------------------------------------------------------------------------------------


def test_label_renders_subject_item_and_formats() -> None:
    label = render_label(
        "Review {subject.reference}: {subject.amount:,.2f} for {item}",
        {"reference": "EXP-1", "amount": 1234.5},
        "insurance",
    )
    assert label == "Review EXP-1: 1,234.50 for insurance"


def test_missing_values_render_visibly_never_crash() -> None:
    assert render_label("Review {subject.reference} {item.name}", {}) == (
        "Review {?subject.reference} {?item.name}"
    )
    assert render_label("{subject.n:%Y} {{literal}}", {"n": "x"}) == "x {literal}"


# -- priority -----------------------------------------------------------------------------------


def test_priority_fixed_and_from_subject() -> None:
    assert sla.resolve_priority(sla.as_priority(2), {}) == 2
    by_table = sla.priority_by(subject.priority, {"P1": 1, "P2": 2}, default=3)
    assert sla.resolve_priority(by_table, {"priority": "P1"}) == 1
    assert sla.resolve_priority(by_table, {"priority": "P7"}) == 3
    assert sla.resolve_priority(by_table, {}) == 3
    assert sla.resolve_priority(sla.as_priority(subject.level), {"level": 4}) == 4
    assert sla.resolve_priority(sla.as_priority(None), {}) == sla.DEFAULT_PRIORITY


def test_reminder_description() -> None:
    from taskflow.core.definition.audience import who

    rem = sla.reminder.at(0.75, of="finished", every=business.hours(2), notify=who.holder())
    assert rem.describe() == (
        "at 75% of the finished budget, then every 2 business hours: notify holder"
    )


def test_reminder_schedule_fractions_offsets_and_intervals() -> None:
    from taskflow.core.definition.audience import who

    two_days = resolve_budget(business.days(2), {}, "uk-london")
    assert two_days is not None
    day = timedelta(hours=8, minutes=30)
    at = sla.reminder_schedule(
        sla.reminder.at(0.75, every=real.hours(4), times=3, notify=who.holder()),
        two_days,
        "uk-london",
        day,
    )
    # 75 % of two 8h30 working days, on the milestone's clock.
    assert at.first == ResolvedBudget("business", timedelta(hours=12, minutes=45), "uk-london")
    assert at.every == ResolvedBudget("real", timedelta(hours=4), None)
    assert at.times == 3
    after = sla.reminder_schedule(
        sla.reminder.after(business.hours(2, calendar="24x7"), until=0.5, notify=who.holder()),
        two_days,
        "uk-london",
        day,
    )
    assert after.first == ResolvedBudget("business", timedelta(hours=2), "24x7")
    assert after.until == ResolvedBudget("business", timedelta(hours=8, minutes=30), "uk-london")


@pytest.mark.parametrize("typed", ["ref-1", "https://drive.example/bank.pdf", "docs/bank.pdf"])
def test_a_field_that_takes_uploads_refuses_a_typed_reference(typed: str) -> None:
    upload = Field.upload("document", ["application/pdf"])
    with pytest.raises(PayloadError) as refused:
        validate_payload([upload], {"document": typed})
    [problem] = refused.value.problems
    assert problem.field == "document"
    assert "upload the file first" in problem.reason
    # The legacy kind (no types) still takes the text reference the application understands.
    assert validate_payload([Field.file("document")], {"document": typed}) == {"document": typed}
