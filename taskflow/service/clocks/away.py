"""Who an escalation would hand a slot to and is on leave now (``firing.effects``'s ``away``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from taskflow.core.access import working_hours as wh
from taskflow.core.clocks import firing
from taskflow.core.definition import sla
from taskflow.core.definition.model import Slot
from taskflow.core.runs.model import RunView, SlotView
from taskflow.store.access import principals as principal_rows
from taskflow.store.common import db


async def away(
    conn: db.Connection,
    run: RunView,
    slot: SlotView | None,
    decl: Slot | None,
    actions: Sequence[sla.Action],
    now: datetime,
) -> dict[str, wh.Leave]:
    """The leave at ``now`` of each person ``actions`` reassign to by name (one read, none
    when no action names a person)."""
    targets = firing.reassign_targets(run, slot, decl, actions)
    if not targets:
        return {}
    people = await principal_rows.get_many(conn, sorted(targets))
    return {
        pid: absent
        for pid, person in people.items()
        if (absent := wh.on_leave(person.leave, now)) is not None
    }
