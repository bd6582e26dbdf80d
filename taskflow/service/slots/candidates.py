"""``addCandidate``: widen one live slot's candidates by a principal or a role.

One transaction on the run's lock order (the run, then its live slots, ``runs.decide``):
the slot is decided on as locked (its version, its status, who it admits), so a claim or a
completion racing it goes before or after, never between the read and the write. The
slot's row, its deadlines and a ``slot.candidate_added`` line are one unit of work.
"""

from __future__ import annotations

from datetime import datetime

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import AuditEntry, Outcome, SlotView
from taskflow.core.slots import candidates as core
from taskflow.service.access import access
from taskflow.service.access import principals as principal_service
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import views
from taskflow.store.runs import runs as rows

#: The kinds of key a candidate is added as.
KINDS = core.KINDS
#: The longest role name and reason taken (a key is a short name, a reason a sentence).
MAX_ROLE = 200
MAX_REASON = 2000


def _text(value: str | None, field: str, most: int) -> str | None:
    if value is None:
        return None
    text = value.strip()
    if not text or len(text) > most or any(ord(c) < 32 for c in text):
        raise errors.ValidationError(
            f"{field} must be 1 to {most} printable characters.", field=field
        )
    return text


async def _key(
    services: Services, principal: str | None, role: str | None
) -> tuple[str, frozenset[str] | None]:
    """The audience key to add and, for a principal, the keys they carry."""
    principal, role = _text(principal, "principal", MAX_ROLE), _text(role, "role", MAX_ROLE)
    if (principal is None) == (role is None):
        raise errors.ValidationError("Name exactly one of principal and role.", field="principal")
    if role is not None:
        return f"role:{role}", None
    assert principal is not None
    found = await principal_service.get(services, principal)
    if found is None or not found.active:
        raise errors.ValidationError(
            f"There is no active principal {principal!r} to add.", field="principal"
        )
    return f"user:{found.id}", access.keys(found)


@retry.retried("add a candidate")
async def add_candidate(
    services: Services,
    actor: Principal,
    slot_id: str,
    *,
    principal: str | None = None,
    role: str | None = None,
    reason: str,
    expected_version: int | None = None,
) -> SlotView:
    """Let ``principal`` (a login) or ``role`` take the slot too; by its delegates, leads
    and managers whose grants reach it, and admins (``access.may_add_candidate``)."""
    why = _text(reason, "reason", MAX_REASON)
    key, added_keys = await _key(services, principal, role)
    slot = await views.visible_slot(services, actor, slot_id)

    def decide(
        definition: Definition, run: rows.RunRow, slots: list[SlotView], now: datetime
    ) -> Outcome:
        current = next((s for s in slots if s.id == slot_id), None)
        if current is None:
            raise errors.NotFound(f"No slot has the id {slot_id!r}.")
        access.require_add_candidate(actor, run.view.workflow, current)
        after = core.add_candidate(current, key, added_keys, now, expected_version)
        details = {"slot": after.name, "added": key, "audience": str(after.audience)}
        line = AuditEntry("slot.candidate_added", now, actor.id, after.id, why, details)
        return Outcome(run.view, (), (after,), (line,), run_changed=False)

    async def work() -> SlotView:
        async with services.db.transaction() as conn:
            await run_service.decide(services, conn, slot.run_id, decide)
            done = await rows.get_slot(conn, slot_id)
        assert done is not None
        return done

    return await run_service.refusals_recorded(
        services, slot.run_id, actor.id, "add a candidate", work, slot_id=slot_id
    )
