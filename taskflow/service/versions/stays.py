"""Carrying out a ``stay`` migration step on one locked run (``run_migrations.py``).

The kept slots are put under their new state and names first (one statement),
then the core (``core/versions/staying.py``) decides labels, restarted clocks and
the slots the state adds, and the outcome is written as any decision's: the
run on its new state, slots, clocks, and timers planned by the new version
(a reminder that already fired is not sent again: timers are keyed by slot).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

from taskflow import errors
from taskflow.core.definition import children, migrations
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.decision import Decision
from taskflow.core.runs.model import RunView, SlotView
from taskflow.core.versions import staying
from taskflow.service.clocks import deadlines
from taskflow.service.common.container import Services
from taskflow.service.runs import ids, persist
from taskflow.store.common import db
from taskflow.store.compose import children as child_rows
from taskflow.store.versions import run_migrations as store


def renames(
    run: RunView, slots: Sequence[SlotView], step: migrations.Step, target: Definition
) -> list[store.Renamed]:
    """The current visit's slots whose state or name the step changes; refused when the
    target's state lacks one (checked at load when the old version is loaded too)."""
    name = step.state_after(run.state) or run.state
    state = target.state(name)
    found = []
    for view in slots:
        if view.visit != run.visit:
            continue
        new = step.slot_after(view.name)
        if not any(s.name == new for s in state.slots):
            raise errors.ValidationError(
                f"Version {target.version} of {run.workflow!r} keeps run {run.id} in {name!r}, "
                f"which has no slot {new!r} for its slot {view.name!r}: map it "
                "(migration.stay(slots={...})) or use migration.to('...')."
            )
        if (view.state, view.name) != (name, new):
            found.append(store.Renamed(view.id, name, new, state.slot(new).waits_for))
    return found


async def keep(
    services: Services,
    conn: db.Connection,
    run: RunView,
    slots: Sequence[SlotView],
    step: migrations.Step,
    target: Definition,
    now: datetime,
    actor: str,
) -> None:
    """Keep ``run`` (its row locked, already on ``target``'s version) where ``step`` says."""
    renamed = renames(run, slots, step, target)
    old_names = {v.id: v.name for v in slots}
    await store.rename_slots(conn, renamed, now)
    await store.rename_buffered(conn, run.id, {a: b for a, b in step.slots if a != b})
    state = step.state_after(run.state) or run.state
    labels = dict(step.children)
    await child_rows.rename(conn, run.id, run.visit, state, labels)
    loaded = await deadlines.load_slots(conn, run.id)
    moved = dataclasses.replace(
        run, definition_version=target.version, results=children.renamed(run.results, labels)
    )
    decision = Decision(target, moved, loaded, now=now, actor=actor, new_id=ids.new_id)
    decision.set_run(state=state)
    staying.keep(decision, step, {r.slot_id: old_names[r.slot_id] for r in renamed})
    await persist.outcome(
        conn, decision.outcome(), now=now, sla=deadlines.sla_of(services, target, loaded, actor)
    )
