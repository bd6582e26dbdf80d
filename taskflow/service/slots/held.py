"""Slots a principal holds, returned to the pool when the principal is deactivated.

Each release is the one ``release`` makes (``core.runs.slots.release`` decided as
the holder, written by ``queries.write_slot_move``, clocks and timers by
``deadlines.after_slot_move``), inside the caller's transaction, with a
``slot.released`` line naming who deactivated the holder and why.
"""

from __future__ import annotations

from datetime import datetime

from taskflow.core.access.principals import Principal
from taskflow.core.runs import refusals
from taskflow.core.runs.model import CLAIMED, AuditEntry
from taskflow.core.slots import slots as core
from taskflow.service.access import access
from taskflow.service.clocks import deadlines
from taskflow.service.common.container import Services
from taskflow.store.common import db, locks
from taskflow.store.runs import runs as rows
from taskflow.store.slots import held as held_rows
from taskflow.store.slots import queries


async def release_all(
    services: Services,
    conn: db.Connection,
    holder: Principal,
    actor: str,
    now: datetime,
    reason: str,
) -> list[str]:
    """Release every slot ``holder`` holds, in ``conn``'s transaction; the released ids.

    Follows the lock order: each run (in id order), then its held slots, then what the
    release writes (clocks, timers, the line).
    """
    keys = access.keys(holder)
    released: list[str] = []
    for run_id, slot_ids in (await held_rows.held_slots_by_run(conn, holder.id)).items():
        await locks.lock_run(conn, run_id)
        for slot_id in slot_ids:
            slot = await rows.get_slot(conn, slot_id, lock=True)
            if slot is None or slot.status != CLAIMED or slot.holder != holder.id:
                continue
            try:
                after = core.release(slot, holder.id, keys, now)
            except refusals.Refusal:
                continue
            written = await queries.write_slot_move(conn, slot, after, now)
            if written is None:  # cannot happen while the slot's lock is held
                continue
            line = AuditEntry(
                "slot.released",
                now,
                actor,
                slot.id,
                reason,
                {"slot": slot.name, "previous_holder": holder.id},
            )
            await deadlines.after_slot_move(services, conn, written, now, actor, lines=[line])
            released.append(slot_id)
    return released
