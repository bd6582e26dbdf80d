"""``core/slots/candidates``: adding a candidate keeps the slot's exclusions, and lets in the
added key even where the rule asks more of everyone else."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from taskflow.core.definition import audience as au
from taskflow.core.definition import subject, who
from taskflow.core.runs import refusals
from taskflow.core.runs.model import CLAIMED, OPEN, SATISFIED, SlotView
from taskflow.core.slots import candidates

NOW = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
FINANCE = au.compile(who.role("finance") - who.id(subject.submitted_by), {"submitted_by": "sam"})
SAM = frozenset({"user:sam", "role:finance", "role:security", au.ANY_KEY})
LEE = frozenset({"user:lee", "role:legal", au.ANY_KEY})


def slot(audience: au.Audience = FINANCE, status: str = OPEN) -> SlotView:
    return SlotView(
        "s1", "r1", 1, "submitted", "finance_review", "reviewed", status, audience,
        au.Audience(frozenset()), 3, "Review",
    )  # fmt: skip


def test_a_widened_rule_admits_the_key_and_keeps_its_exclusions() -> None:
    widened = candidates.widened(FINANCE, "role:security")
    assert widened.admits(frozenset({"user:seb", "role:security"}))
    assert widened.admits(frozenset({"user:fiona", "role:finance"}))
    assert not widened.admits(SAM)  # the submitter, though now in security too
    assert not widened.admits(LEE)


def test_a_rule_that_asks_more_of_everyone_lets_the_added_principal_in() -> None:
    managers_in_eu = au.compile(who.role("manager") & (who.attr("region") == "eu"), {})
    widened = candidates.widened(managers_in_eu, "user:lee")
    assert widened.admits(LEE)
    assert widened.admits(frozenset({"role:manager", "attr:region=eu"}))
    assert not widened.admits(frozenset({"role:manager", "attr:region=us"}))


def test_adding_moves_the_version_and_refuses_what_cannot_be_added() -> None:
    added = candidates.add_candidate(slot(), "user:lee", LEE, NOW, 1)
    assert (added.version, added.audience.admits(LEE)) == (2, True)
    assert (
        candidates.add_candidate(slot(status=CLAIMED), "role:legal", None, NOW, None).version == 2
    )
    with pytest.raises(refusals.StaleVersion):
        candidates.add_candidate(slot(), "user:lee", LEE, NOW, 7)
    with pytest.raises(refusals.SlotNotOpen):
        candidates.add_candidate(slot(status=SATISFIED), "user:lee", LEE, NOW, None)
    with pytest.raises(refusals.AlreadyCandidate):
        candidates.add_candidate(slot(), "role:finance", None, NOW, None)
    with pytest.raises(refusals.AlreadyCandidate):
        candidates.add_candidate(added, "user:lee", LEE, NOW, None)
    with pytest.raises(refusals.NotCandidate, match="'sam' is kept out"):
        candidates.add_candidate(slot(), "user:sam", SAM - {"role:finance"}, NOW, None)
