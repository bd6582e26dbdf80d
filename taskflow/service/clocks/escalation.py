"""Escalate one slot now, as a reminder's ``escalate_to`` does when its timer fires.

An automation's ``escalate`` action calls it (as ``automation:<id>`` with its author's
powers). It takes the run's locks in the lock order (the run, then its live slots), loads
the run as the timer batch loads a batch's runs, and runs the batch's per-slot step
(``slot_actions.carry_out``) with one ``escalate`` action: the slot's declared candidate
rule widened by the key, its exclusions kept (``who.widen``), a ``slot.escalated`` line,
the clocks synced; then flushes, as the batch does. Like a timer's escalation, it widens
the *declared* rule: an earlier escalation's (or ``addCandidate``'s) widening is replaced.
"""

from __future__ import annotations

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.definition import audience as au
from taskflow.core.definition import sla
from taskflow.core.runs import refusals
from taskflow.core.runs.model import SlotView
from taskflow.core.runs.statuses import RunStatus
from taskflow.service.access import access
from taskflow.service.clocks import slot_actions
from taskflow.service.clocks import timer_batch as runs_batch
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.slots import views
from taskflow.store.common import locks
from taskflow.store.runs import runs as rows

#: The keys an escalation names, and the ``who`` term each is.
TERMS = {"user": au.who.id, "role": au.who.role, "group": au.who.group}


def who_of(key: str) -> au.Who:
    """``user:<id>``, ``role:<name>`` or ``group:<name>`` as the candidate term it names."""
    kind, _, name = key.partition(":")
    term = TERMS.get(kind)
    if term is None or not name.strip():
        raise errors.ValidationError(
            f"Escalate to user:<id>, role:<name> or group:<name>, not {key!r}.", field="to"
        )
    return term(name.strip())


@retry.retried("escalate")
async def escalate(
    services: Services, actor: Principal, slot_id: str, to: str, reason: str | None = None
) -> SlotView:
    """Widen the live slot's candidates by ``to`` now (who may: ``may_add_candidate``)."""
    who = who_of(to)
    slot = await views.visible_slot(services, actor, slot_id)
    async with services.db.transaction() as conn:
        found = await rows.get_run(conn, slot.run_id, lock=True)
        if found is None or found.view.status != RunStatus.ACTIVE:
            raise refusals.RunNotActive(
                "The run has ended: its slots are not escalated.",
                status=found.view.status if found else None,
            )
        await locks.lock_live_slots(conn, [slot.run_id])  # the lock order: run, then slots
        now = services.clock.now()
        state = (await runs_batch.load(conn, {slot.run_id: found}))[slot.run_id]
        current = state.slots.get(slot_id)
        if current is None or not current.live:
            status = current.status if current else None
            raise refusals.SlotNotOpen(
                f"The slot is {status}: there is nothing to escalate.", status=status
            )
        run = state.run
        access.require_add_candidate(actor, run.workflow, current)
        definition = services.catalog.get(run.workflow, run.definition_version)
        await slot_actions.carry_out(
            services,
            conn,
            state,
            definition,
            current,
            definition.slot(current.state, current.name),
            (sla.Action("escalate", who=who),),
            kind="slot.escalated",
            message=reason or f"{current.label}: escalate to {to}",
            heads=(),
            quiet=False,
            now=now,
            actor=actor.id,
        )
        await runs_batch.flush(conn, [state], now)
    return state.slots[slot_id]
