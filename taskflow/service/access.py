"""Who may see and do what, beyond slot candidacy (which the core decides)."""

from __future__ import annotations

from collections.abc import Iterable

from taskflow import errors
from taskflow.core.definition import audience as au
from taskflow.core.definition.workflow import Definition
from taskflow.core.principals import Principal
from taskflow.core.runs.model import PENDING, RunView, SlotView


def keys(principal: Principal) -> frozenset[str]:
    """The audience keys a principal carries (``user:``, ``role:``, ``group:``, ``attr:``)."""
    return principal.audience_keys


def can_read_run(principal: Principal, slots: Iterable[SlotView]) -> bool:
    """Leads read every run; others the runs where they hold, could take, delegate or did a slot."""
    if principal.is_lead or principal.is_integration:
        return True
    mine = keys(principal)
    return any(involved(principal, mine, s) for s in slots)


def involved(principal: Principal, mine: frozenset[str], slot: SlotView) -> bool:
    """True when the principal holds, did, could take or may delegate this slot."""
    return (
        slot.holder == principal.id
        or slot.satisfied_by == principal.id
        or slot.audience.admits(mine)
        or (bool(slot.delegates.keys) and slot.delegates.admits(mine))
    )


def reads_links(principal: Principal, slots: Iterable[SlotView]) -> bool:
    """May the principal read the run's magic links and their recipients?

    Leads and applications may; others only through a slot of the run that has opened
    (held, done, could take or may delegate it): a candidate of a slot still pending
    (waiting for others) reads the run, not its links.
    """
    if principal.is_lead or principal.is_integration:
        return True
    mine = keys(principal)
    return any(s.status != PENDING and involved(principal, mine, s) for s in slots)


def may_move(principal: Principal, definition: Definition, run: RunView) -> bool:
    """True when a move of the run's current state is meant for the principal (e.g. withdraw)."""
    if run.status != "active":
        return False
    mine = keys(principal)
    state = definition.state(run.state)
    return any(m.by is not None and au.compile(m.by, run.subject).admits(mine) for m in state.moves)


def require_integration(principal: Principal, action: str) -> None:
    if not principal.is_integration:
        raise errors.Forbidden(
            f"Only applications (role 'integration') and admins may {action}; "
            f"{principal.id!r} has roles {list(principal.roles)}."
        )


def require_lead(principal: Principal, action: str) -> None:
    if not (principal.is_lead or principal.is_integration):
        raise errors.Forbidden(
            f"Only leads, managers, admins and applications may {action}; "
            f"{principal.id!r} has roles {list(principal.roles)}."
        )
