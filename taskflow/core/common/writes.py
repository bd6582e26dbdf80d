"""What one decision (or a worker's batch of them) writes, as ONE value: :class:`Writes`,
and how several merge into one (:meth:`Writes.merge`, :func:`merged`: later wins per row).
``unit_of_work.plan`` builds it; ``store/common/unit_of_work.py`` writes it. Pure."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from taskflow.core.clocks import calendars, clocks
from taskflow.core.clocks.timer_states import TimerRow
from taskflow.core.compose import compose
from taskflow.core.runs.model import AuditEntry, RunView, SlotView
from taskflow.core.steps import step_timers


@dataclass(frozen=True)
class ClockWrite:
    """A clock to write, with the derived instants kept beside the ledger for reports."""

    slot_id: str
    run_id: str
    clock: clocks.Clock
    due_at: datetime | None
    breached_at: datetime | None


@dataclass(frozen=True)
class Pickup:
    """A live slot's time to pickup (µs) on the clock a report measures it on ('' for none)."""

    slot_id: str
    clock: str
    business_us: int
    real_us: int


@dataclass(frozen=True)
class Ended:
    """A slot that ended, with the clock and calendar its report measures are taken on."""

    slot: SlotView
    clock: clocks.Clock | None
    calendar: calendars.BusinessClock


@dataclass(frozen=True)
class Writes:
    """Everything a decision (or a batch of them) writes; the store writes it in one go."""

    #: Runs as they now are, with how many decisions changed each (the version bump).
    runs: tuple[tuple[RunView, int], ...] = ()
    #: New slots, each with its run's workflow.
    created: tuple[tuple[str, SlotView], ...] = ()
    changed: tuple[SlotView, ...] = ()
    clocks: tuple[ClockWrite, ...] = ()
    #: (slot, visit, nearest due instant) of every slot whose deadlines were planned.
    due: tuple[tuple[str, int, datetime | None], ...] = ()
    pickups: tuple[Pickup, ...] = ()
    #: (slot, milestone, at): breaches to record (the first record of each stays).
    breaches: tuple[tuple[str, str, datetime], ...] = ()
    #: (run, line) timeline lines, in order.
    lines: tuple[tuple[str, AuditEntry], ...] = ()
    #: Timer rows as they must now be (id 0: a new key); armed ones wake the workers.
    timers: tuple[TimerRow, ...] = ()
    notify: bool = False
    ended: tuple[Ended, ...] = ()
    #: Step rows made due (a state with an action entered); a key that exists adds nothing.
    steps: tuple[step_timers.DueStep, ...] = ()
    #: (run, name, value) recorded by ``steps.once`` in hooks; a name recorded already by
    #: another transaction makes the writer report a lost race (the decision runs again).
    once: tuple[tuple[str, str, object], ...] = ()
    #: Child rows due (a state with children entered); a key that exists adds nothing.
    children: tuple[compose.DueChild, ...] = ()

    def merge(self, later: Writes) -> Writes:
        """These writes followed by ``later``'s: per row the later value wins (a run's
        version bumps add up, a breach keeps its first instant), lines are appended."""
        if later.empty():
            return self
        return later if self.empty() else _folded((self, later))

    def empty(self) -> bool:
        """Nothing to write (every field empty, ``notify`` false: a new field counts too)."""
        return not any(getattr(self, f.name) for f in dataclasses.fields(self))


def merged(writes: Iterable[Writes]) -> Writes:
    """Several decisions' writes as one, in order: what merging them one after the other
    with :meth:`Writes.merge` gives (a breach listed at its first record), built in one
    pass over them (a worker's batch merges a hundred runs' writes at once)."""
    level = [w for w in writes if not w.empty()]
    if len(level) <= 1:
        return level[0] if level else Writes()
    return _folded(level)


def _folded(level: Sequence[Writes]) -> Writes:
    """:func:`merged` of two or more writes, none empty."""
    runs: dict[str, tuple[RunView, int]] = {}
    created: dict[str, tuple[str, SlotView]] = {}
    changed: dict[str, SlotView] = {}
    clock_rows: dict[tuple[str, str], ClockWrite] = {}
    due: dict[str, tuple[str, int, datetime | None]] = {}
    picked: dict[str, Pickup] = {}
    breaches: dict[tuple[str, str], datetime] = {}
    lines: list[tuple[str, AuditEntry]] = []
    timers: dict[str, TimerRow] = {}
    done: dict[str, Ended] = {}
    steps: dict[str, step_timers.DueStep] = {}
    once: dict[tuple[str, str], tuple[str, str, object]] = {}
    kids: dict[str, compose.DueChild] = {}
    for w in level:
        for run, n in w.runs:
            before = runs.get(run.id)
            runs[run.id] = (run, before[1] + n if before is not None else n)
        created.update((v.id, (workflow, v)) for workflow, v in w.created)
        for view in w.changed:
            if view.id in created:
                created[view.id] = (created[view.id][0], view)
            else:
                changed[view.id] = view
        clock_rows.update(((c.slot_id, c.clock.milestone), c) for c in w.clocks)
        due.update((d[0], d) for d in w.due)
        picked.update((p.slot_id, p) for p in w.pickups)
        for slot, milestone, at in w.breaches:
            breaches.setdefault((slot, milestone), at)
        lines += w.lines
        timers.update((t.key, t) for t in w.timers)
        done.update((e.slot.id, e) for e in w.ended)
        steps.update((st.key, st) for st in w.steps)
        once.update(((o[0], o[1]), o) for o in w.once)
        kids.update((c.key, c) for c in w.children)
    return Writes(
        runs=tuple(runs.values()),
        created=tuple(created.values()),
        changed=tuple(changed.values()),
        clocks=tuple(clock_rows.values()),
        due=tuple(due.values()),
        pickups=tuple(picked.values()),
        breaches=tuple((s, m, at) for (s, m), at in breaches.items()),
        lines=tuple(lines),
        timers=tuple(timers.values()),
        notify=any(w.notify for w in level),
        ended=tuple(done.values()),
        steps=tuple(steps.values()),
        once=tuple(once.values()),
        children=tuple(kids.values()),
    )
