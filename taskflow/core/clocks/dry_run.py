"""An SLA dry run: a timeline played through a definition on a scratch clock (docs/sla.md).

Pure: the run, its slots, clock ledgers and timer rows live in memory only. Each event
goes through the same core decisions a use case makes (``engine``, ``operator``,
``slots``), each decision through THE planner (``unit_of_work.plan``: clocks, timeline
lines, timers), and between events every timer due fires at its due instant as a punctual
worker would fire it (``firing.effects``, ``clock_lines.clock_firing``, ``engine.goto``).
Nobody is notified: a notice is a ``notification.planned`` line naming its audience.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.clocks import (
    calendars,
    clock_lines,
    clocks,
    deadline_actions,
    deadlines,
    dry_run_answer,
    dry_run_events,
    dry_run_expiry,
    expiry,
    firing,
    run_deadline,
)
from taskflow.core.clocks.dry_run_answer import Answer, Line
from taskflow.core.clocks.timer_states import TimerRow, TimerStatus
from taskflow.core.common import refusals
from taskflow.core.common import unit_of_work as uow
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine, operator
from taskflow.core.runs.model import ACTIVE, CLAIMED, OPEN, AuditEntry, Outcome, RunView, SlotView
from taskflow.core.slots import slots as slot_moves
from taskflow.core.steps import step_timers

#: The run's id in a dry run (slots are ``dry-slot-1``, ``dry-slot-2``...).
RUN_ID = "dry-run"


@dataclass
class _Play:
    definition: Definition
    registry: calendars.Registry
    at_risk: float
    run: RunView | None = None
    slots: dict[str, SlotView] = field(default_factory=dict)
    timers: dict[str, TimerRow] = field(default_factory=dict)
    lines: list[Line] = field(default_factory=list)
    firings: int = 0
    ids: Any = field(default_factory=lambda: itertools.count(1))

    def new_id(self) -> str:
        return f"dry-slot-{next(self.ids)}"

    def carry_out(self, result: Outcome, now: datetime, before: Sequence[SlotView]) -> None:
        """Plan ``result`` as a use case would and hold what it writes in memory."""
        ctx = uow.context(self.definition, self.registry, before, at_risk=self.at_risk)
        writes = uow.plan(result, ctx, list(self.timers.values()), now)
        self.run = result.run
        self.slots.update((v.id, v) for v in (*result.created, *result.changed))
        self.timers.update((t.key, t) for t in writes.timers)
        for _, entry in writes.lines:
            name = self.slots[entry.slot_id].name if entry.slot_id in self.slots else None
            self.lines.append(Line(entry.at, entry.kind, name, entry.reason, entry.details))


def _slot(play: _Play, ev: dry_run_events.Event, statuses: tuple[str, ...]) -> SlotView:
    assert play.run is not None
    found = sorted(
        (
            v
            for v in play.slots.values()
            if v.name == ev.slot and v.visit == play.run.visit and v.status in statuses
        ),
        key=lambda v: v.id,
    )
    if not found:
        live = sorted({v.name for v in play.slots.values() if v.live}) or ["none"]
        raise refusals.SlotNotOpen(
            f"No {' or '.join(statuses)} slot {ev.slot!r} in {play.run.state}; live slots: "
            f"{', '.join(live)}.",
            status="none",
        )
    return found[0]


def _slot_move(play: _Play, ev: dry_run_events.Event, moved: SlotView, kind: str) -> None:
    """A claim or release: the slot's clocks synced, its line, its timers re-planned."""
    assert play.run is not None
    before = play.slots[moved.id]
    after = deadlines.sync_clocks(play.definition, moved, play.run.subject, ev.at)
    line = AuditEntry(kind, ev.at, ev.by, moved.id, ev.reason, {"slot": moved.name})
    play.carry_out(Outcome(play.run, (), (after,), (line,), run_changed=False), ev.at, [before])


def _apply(play: _Play, ev: dry_run_events.Event) -> None:
    """Carry out one event (the start is played by :func:`play`)."""
    assert play.run is not None
    run, slots, now = play.run, list(play.slots.values()), ev.at
    common: dict[str, Any] = {"now": now, "new_id": play.new_id}
    keys = frozenset({f"user:{ev.by}"})
    if ev.kind == "claim":
        slot = _slot(play, ev, (OPEN,))
        _slot_move(play, ev, slot_moves.take(slot, ev.by, now), "slot.claimed")
        return
    if ev.kind == "release":
        slot = _slot(play, ev, (CLAIMED,))
        # Released as its holder would: a dry run checks no delegate.
        holder = slot.holder or ev.by
        released = slot_moves.release(slot, holder, frozenset({f"user:{holder}"}), now)
        _slot_move(play, ev, released, "slot.released")
        return
    head = (play.definition, run, slots)
    by: dict[str, Any] = {"actor": ev.by, **common}
    if ev.kind == "complete":
        slot = _slot(play, ev, (OPEN, CLAIMED))
        # As a raised event or a link would: on behalf, no candidacy or version check.
        result = engine.deposit(
            *head, slot_id=slot.id, event=slot.waits_for, payload=ev.payload,
            actor_keys=keys, expected_version=None, on_behalf=True, **by,
        )  # fmt: skip
    elif ev.kind == "subject":
        changed = {**run.subject, **ev.attributes}
        result = engine.change_subject(*head, subject=changed, registry=play.registry, **by)
    elif ev.kind == "move":
        assert ev.name is not None
        result = engine.move(*head, name=ev.name, data=ev.payload, principal=ev.principal, **common)
    elif ev.kind == "goto":
        assert ev.state is not None
        result = operator.goto(*head, target=ev.state, reason=ev.reason, **by)
    elif ev.kind in ("pause", "resume"):
        pause = ev.kind == "pause"
        result = operator.hand_on_clocks(*head, reason=ev.reason, pause=pause, **by)
    else:  # end: only the horizon
        return
    play.carry_out(result, now, slots)


def _fire(play: _Play, timer: TimerRow) -> None:
    """One timer at its due instant, as the worker fires it (``service/clocks/timers.py``)."""
    assert play.run is not None
    now, run = timer.due_at, play.run
    play.firings += 1
    dry_run_events.check_firings(play.firings)
    slot = play.slots.get(timer.slot_id) if timer.slot_id is not None else None
    stale = run.status != ACTIVE or (timer.slot_id is not None and (slot is None or not slot.live))
    if stale or (
        timer.kind == deadlines.TIMEOUT and not timer.key.startswith(f"{run.id}:{run.visit}:")
    ):
        play.timers[timer.key] = dataclasses.replace(timer, status=TimerStatus.CANCELLED)
        return
    count = timer.fired + 1
    play.timers[timer.key] = dataclasses.replace(timer, status=TimerStatus.FIRED, fired=count)
    base = {"key": timer.key, "due_at": now.isoformat(), "late_seconds": 0.0}
    if timer.kind in (step_timers.STEP, step_timers.EVERY):
        play.lines.append(
            Line(now, "step.skipped", None, "automatic steps do not run in a dry run", base)
        )
        return
    if timer.kind in run_deadline.KINDS:
        _run_deadline(play, run, timer.kind, now, base)
        return
    if timer.kind in expiry.KINDS:
        assert slot is not None
        slots = list(play.slots.values())
        got = dry_run_expiry.fired(
            play.definition, run, slots, slot, timer, play.registry, base, play.new_id
        )
        if isinstance(got, Outcome):
            play.carry_out(got, now, slots)
        else:
            play.lines += [Line(e.at, e.kind, slot.name, e.reason, e.details) for e in got]
        return
    if timer.kind in (deadlines.AT_RISK, deadlines.BREACH):
        assert slot is not None
        entry = clock_lines.clock_firing(timer.kind, slot, timer.ref, now, play.registry, now, base)
        play.carry_out(Outcome(run, (), (slot,), (entry,), run_changed=False), now, [slot])
        return
    if timer.kind == deadlines.REMINDER:
        assert slot is not None
        decl = play.definition.slot(slot.state, slot.name)
        rem = decl.reminders[int(timer.ref)]
        message, kind, actions = f"{slot.label}: {rem.describe()}", "reminder.fired", rem.actions
        details = {**base, "slot": slot.name, "reminder": rem.describe(), "firing": count}
    else:
        decl = None
        timeout = play.definition.state(run.state).timeouts[int(timer.ref)]
        message, kind, actions = (
            f"{run.state}: {timeout.describe()}",
            "timeout.fired",
            timeout.actions,
        )
        details = {**base, "state": run.state, "timeout": timeout.describe()}
    result = firing.effects(run, slot, decl, actions, message=message, now=now)
    slot_id = slot.id if slot else None
    lines = [AuditEntry(kind, now, None, slot_id, message, details)]
    lines += [
        AuditEntry("notification.planned", now, None, slot_id, message, {"to": n.who})
        for n in result.notices
    ]
    lines += result.audit
    changed = result.slot if result.slot is not None else slot
    if changed is not None and slot is not None:
        changed = deadlines.sync_clocks(play.definition, changed, run.subject, now)
        done = [] if result.move_to else lines
        play.carry_out(Outcome(run, (), (changed,), tuple(done), run_changed=False), now, [slot])
    if result.move_to is not None:
        assert play.run is not None
        slots = list(play.slots.values())
        moved = engine.goto(
            play.definition,
            play.run,
            slots,
            target=result.move_to,
            reason=message,
            now=now,
            actor=None,
            new_id=play.new_id,
        )
        play.carry_out(dataclasses.replace(moved, audit=(*lines, *moved.audit)), now, slots)
    elif changed is None:
        play.lines += [Line(e.at, e.kind, None, e.reason, e.details) for e in lines]


def _run_deadline(
    play: _Play, run: RunView, kind: str, now: datetime, base: dict[str, Any]
) -> None:
    """A run deadline's milestone: its line, notices planned, actions as the worker's."""
    rule = play.definition.deadline
    assert rule is not None  # its timers were planned from it
    found = run_deadline.due(play.definition, run, play.registry, play.at_risk)
    line = run_deadline.firing_line(kind, found, now, now, base)
    actions = rule.on_risk if kind == run_deadline.AT_RISK else rule.on_breach
    told = firing.effects(run, None, None, actions, message=line.reason or "", now=now).notices
    lines = [line, *(AuditEntry("notification.planned", now, None, None, line.reason,
                                {"to": n.who}) for n in told)]  # fmt: skip
    for action in actions:
        if play.run is None or play.run.status != ACTIVE:
            break
        slots = list(play.slots.values())
        result = deadline_actions.outcome(
            play.definition, play.run, slots, action.kind, action.target,
            reason=line.reason or "", now=now, new_id=play.new_id,
        )  # fmt: skip
        if result is not None:
            play.carry_out(dataclasses.replace(result, audit=(*lines, *result.audit)), now, slots)
            lines = []
    play.lines += [Line(e.at, e.kind, None, e.reason, e.details) for e in lines]


def _fire_until(play: _Play, until: datetime) -> None:
    """Fire every armed timer due at or before ``until``, in due order."""
    while True:
        due = [
            t for t in play.timers.values() if t.status == TimerStatus.ARMED and t.due_at <= until
        ]
        if not due:
            return
        _fire(play, min(due, key=lambda t: (t.due_at, t.key)))


def play(
    definition: Definition,
    registry: calendars.Registry,
    subject: Mapping[str, Any],
    raw_events: Sequence[Mapping[str, Any]],
    at_risk: float = clocks.DEFAULT_AT_RISK,
) -> Answer:
    """Play ``raw_events`` (``[{at, kind, ...}]``, the first a start) for a run of
    ``definition`` on ``subject``; a refused event is ``DRY_RUN_EVENT_REFUSED``."""
    events = dry_run_events.timeline(raw_events)
    state = _Play(definition, registry, at_risk)
    first = events[0]
    started = engine.start(
        definition,
        run_id=RUN_ID,
        subject=dict(subject),
        now=first.at,
        actor=first.by,
        new_id=state.new_id,
    )
    state.carry_out(started, first.at, [])
    for ev in events[1:]:
        _fire_until(state, ev.at)
        try:
            _apply(state, ev)
        except errors.InternalError:
            raise
        except errors.TaskflowError as refused:
            raise refusals.DryRunEventRefused(
                f"events[{ev.index}] ({ev.kind} at {ev.at.isoformat()}) cannot happen: "
                f"{refused.message}",
                index=ev.index,
                kind=ev.kind,
                reason=refused.code,
            ) from None
    end = events[-1].at
    _fire_until(state, end)
    assert state.run is not None
    return dry_run_answer.answer(
        state.definition,
        state.registry,
        state.at_risk,
        state.run,
        state.slots,
        lines=state.lines,
        firings=state.firings,
        start=first.at,
        end=end,
    )
