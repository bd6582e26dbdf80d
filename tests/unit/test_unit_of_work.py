"""The planner of the unit of work, pure: an outcome, the loaded rows and ``now`` -> Writes."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from taskflow.core.clocks import deadlines
from taskflow.core.clocks.timer_states import TimerRow, TimerStatus
from taskflow.core.common import unit_of_work as uow
from taskflow.core.runs.model import CANCELLED, AuditEntry, Outcome
from taskflow.core.slots import slots as slot_moves
from tests.unit.test_clocks import REGISTRY
from tests.unit.test_deadlines import AGENT, SUPPORT, TICKET, TUESDAY_9, Ticket, triaged


def _armed(writes: uow.Writes) -> list[TimerRow]:
    """The writes' timer rows as stored rows (the ids a database would give them)."""
    return [dataclasses.replace(t, id=i) for i, t in enumerate(writes.timers, start=1)]


def test_a_started_run_writes_its_rows_clocks_due_instants_timers_and_lines() -> None:
    ticket = Ticket()
    out = _started(ticket)
    writes = uow.plan(out, uow.context(SUPPORT, REGISTRY), [], TUESDAY_9)
    assert writes.runs == ((out.run, 1),)
    assert [v for _, v in writes.created] == list(out.created)
    assert {w for w, _ in writes.created} == {"support-ticket"}
    [triage] = out.created
    assert [(c.slot_id, c.clock.milestone) for c in writes.clocks] == [(triage.id, "finished")]
    assert writes.due == ((triage.id, triage.visit, TUESDAY_9 + timedelta(minutes=30)),)
    # New keys are armed (id 0: the database gives the id) and wake the workers.
    assert {(t.id, t.status, t.kind) for t in writes.timers} >= {(0, "armed", deadlines.BREACH)}
    assert writes.notify
    # The engine's lines, the slot's clock line right after its slot's last line.
    kinds = [line.kind for _, line in writes.lines]
    assert kinds[-1] == "clock.started"
    assert {run for run, _ in writes.lines} == {out.run.id}
    assert writes.ended == ()
    assert writes.breaches == ()


def _started(ticket: Ticket) -> Outcome:
    [triage] = ticket.slots.values()
    return Outcome(
        ticket.run,
        (triage,),
        (),
        (AuditEntry("slot.opened", TUESDAY_9, "app", triage.id, None, {}),),
        run_changed=True,
    )


def test_a_claim_meets_a_clock_cancels_its_timers_and_leaves_unchanged_ledgers_out() -> None:
    ticket = triaged()
    slot = ticket.named("first_response")
    loaded = uow.plan(
        Outcome(ticket.run, (), (slot,), (), run_changed=False),
        uow.context(SUPPORT, REGISTRY),
        [],
        ticket.now,
    )
    timers = _armed(loaded)
    claimed = slot_moves.claim(slot, "sasha", AGENT, ticket.now, None)
    claimed = deadlines.sync_clocks(SUPPORT, claimed, TICKET, ticket.now)
    ctx = uow.context(SUPPORT, REGISTRY, [slot], actor="sasha")
    writes = uow.plan(
        Outcome(ticket.run, (), (claimed,), (), run_changed=False),
        ctx,
        timers,
        ticket.now,
        rows=False,
    )
    assert (writes.runs, writes.created, writes.changed) == ((), (), ())
    # Only the ledger that changed (assigned, now met) is written; finished is as stored.
    assert [c.clock.milestone for c in writes.clocks] == ["assigned"]
    assert [line.kind for _, line in writes.lines] == ["clock.met"]
    assert [line.actor for _, line in writes.lines] == ["sasha"]
    cancelled = {t.key for t in writes.timers if t.status == TimerStatus.CANCELLED}
    assert cancelled
    assert all(":assigned" in k or ":reminder:" in k for k in cancelled)
    assert all(t.id != 0 for t in writes.timers if t.status == TimerStatus.CANCELLED)
    assert writes.pickups
    assert writes.pickups[0].slot_id == slot.id


def test_a_cancelled_slot_is_measured_and_its_timers_cancelled() -> None:
    ticket = triaged()
    slot = ticket.named("first_response")
    timers = _armed(
        uow.plan(
            Outcome(ticket.run, (), (slot,), (), run_changed=False),
            uow.context(SUPPORT, REGISTRY),
            [],
            ticket.now,
        )
    )
    gone = dataclasses.replace(slot, status=CANCELLED, cancelled_at=ticket.now)
    writes = uow.plan(
        Outcome(ticket.run, (), (gone,), (), run_changed=False),
        uow.context(SUPPORT, REGISTRY, [slot]),
        timers,
        ticket.now,
    )
    assert writes.changed == (gone,)
    assert [e.slot.id for e in writes.ended] == [slot.id]
    assert {t.status for t in writes.timers} == {TimerStatus.CANCELLED}
    assert not writes.notify


def test_merged_writes_keep_the_latest_row_add_up_versions_and_keep_the_first_breach() -> None:
    ticket = triaged()
    slot = ticket.named("first_response")
    run = ticket.run
    later_run = dataclasses.replace(run, state="waiting")
    created = uow.Writes(runs=((run, 1),), created=(("support-ticket", slot),))
    changed_slot = dataclasses.replace(slot, priority=1)
    line = AuditEntry("x", ticket.now, None, None, None, {})
    first = created.merge(uow.Writes(breaches=((slot.id, "finished", TUESDAY_9),)))
    both = first.merge(
        uow.Writes(
            runs=((later_run, 1),),
            changed=(changed_slot,),
            breaches=((slot.id, "finished", ticket.now),),
            lines=((run.id, line),),
        )
    )
    assert both.runs == ((later_run, 2),)
    # A slot created and then changed in the same batch is inserted as it ended up.
    assert both.created == (("support-ticket", changed_slot),)
    assert both.changed == ()
    assert both.breaches == ((slot.id, "finished", TUESDAY_9),)
    assert both.lines == ((run.id, line),)
    assert uow.merged([created, uow.Writes(runs=((later_run, 1),))]).runs == ((later_run, 2),)


def test_a_batch_merged_at_once_is_its_writes_merged_one_after_the_other() -> None:
    ticket = triaged()
    slot = ticket.named("first_response")
    run = ticket.run
    moved, ended = (dataclasses.replace(run, state=s) for s in ("waiting", "closed"))
    changed_slot = dataclasses.replace(slot, priority=1)
    line = [AuditEntry(k, ticket.now, None, None, None, {}) for k in "abc"]
    timer = TimerRow(
        "t", run.id, slot.id, "due", "finished", ticket.now, id=0, status=TimerStatus.ARMED, fired=0
    )
    later_timer = dataclasses.replace(timer, due_at=TUESDAY_9)
    writes = [
        uow.Writes(
            runs=((run, 1),), created=(("w", slot),), timers=(timer,), lines=((run.id, line[0]),)
        ),
        uow.Writes(),
        uow.Writes(
            runs=((moved, 1),),
            changed=(changed_slot,),
            breaches=((slot.id, "finished", TUESDAY_9),),
            lines=((run.id, line[1]),),
            notify=True,
        ),
        uow.Writes(
            runs=((ended, 2),),
            timers=(later_timer,),
            breaches=((slot.id, "finished", ticket.now),),
            lines=((run.id, line[2]),),
        ),
    ]
    batch = uow.merged(writes)
    assert batch.runs == ((ended, 4),)
    assert batch.created == (("w", changed_slot),)
    assert batch.changed == ()
    assert batch.timers == (later_timer,)
    assert batch.breaches == ((slot.id, "finished", TUESDAY_9),)
    assert [e.kind for _, e in batch.lines] == ["a", "b", "c"]
    assert batch.notify
    assert batch == writes[0].merge(writes[2]).merge(writes[3])
    assert uow.merged([writes[1]]) == uow.Writes()
