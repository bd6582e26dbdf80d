"""The agent tools' pure rules: the ``agent`` grant, the slot verbs a principal may use now,
and the redaction of addresses in what an agent reads."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from taskflow import errors
from taskflow.core.access import access
from taskflow.core.access import principals as core
from taskflow.core.definition import audience as au
from taskflow.core.delivery import redact
from taskflow.core.runs import refusals
from taskflow.core.runs.statuses import SlotStatus
from taskflow.core.slots import slots
from tests.unit.slot_views import slot_view

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)
ME = frozenset({"user:me"})


def _principal(*, roles: list[str] | None = None, powers: object = None) -> core.Principal:
    return core.build({"id": "me", "display_name": "Me", "roles": roles, "powers": powers})


def test_an_agent_grant_reaches_its_workflows_and_nothing_else() -> None:
    scoped = _principal(powers=[{"power": "agent", "workflows": ["expense-approval"]}])
    everywhere = _principal(powers=[{"power": "agent"}])
    assert access.may_act_as_agent(scoped, "expense-approval")
    assert not access.may_act_as_agent(scoped, "support-ticket")
    assert access.may_act_as_agent(everywhere, "support-ticket")
    # It is no power of oversight: it reads and operates nothing.
    assert access.oversight(scoped) == access.NOWHERE
    assert not access.may_operate(scoped, "expense-approval")


def test_admins_need_the_agent_grant_too() -> None:
    admin = _principal(roles=["admin"])
    assert access.may_operate(admin, "expense-approval")
    assert not access.may_act_as_agent(admin, "expense-approval")


def test_an_agent_grant_names_no_teams() -> None:
    with pytest.raises(errors.ValidationError, match="per workflow, not per team"):
        _principal(powers=[{"power": "agent", "teams": ["role:finance"]}])


@pytest.mark.parametrize(
    ("status", "holder", "wanted"),
    [
        (SlotStatus.OPEN, None, ("claim", "assign", "complete")),
        (SlotStatus.CLAIMED, "me", ("release", "assign", "complete")),
        (SlotStatus.CLAIMED, "someone", ("release", "assign")),
        (SlotStatus.SATISFIED, None, ()),
    ],
)
def test_the_available_slot_verbs_are_the_verbs_own_decisions(
    status: SlotStatus, holder: str | None, wanted: tuple[str, ...]
) -> None:
    slot = slot_view(
        ME, status=status, holder=holder, delegates=au.Audience(keys=ME), claimed_at=NOW
    )
    assert slots.available(slot, "me", ME, NOW) == wanted


def test_a_release_on_a_stale_copy_is_refused() -> None:
    held = slot_view(ME, status=SlotStatus.CLAIMED, holder="me", claimed_at=NOW, version=3)
    with pytest.raises(refusals.StaleVersion):
        slots.release(held, "me", ME, NOW, 2)
    assert slots.release(held, "me", ME, NOW, 3).version == 4


def test_addresses_and_url_secrets_are_taken_out_of_text() -> None:
    text = "send to ann.o'neil+x@vendor.example or https://h.example/in?token=s3cret now"
    assert redact.redact_addresses(text) == (
        "send to [redacted] or https://h.example/in?[redacted] now"
    )
    assert redact.redact_addresses("no address here") == "no address here"
