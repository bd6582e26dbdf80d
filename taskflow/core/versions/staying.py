"""A ``stay`` migration step on a run whose slots already carry their new names (pure).

The run keeps its visit, its slots, their holders and their clock ledgers
(elapsed time is kept: a migration does not reset an SLA). On top of that:

- slots that were renamed (or whose state was) get the new version's label,
  candidates and delegates (the holder stays);
- the unmet clocks of the milestones the step restarts start afresh at ``now``
  on the new version's budget (``clock.restarted`` on the timeline);
- a milestone the new version adds to a kept live slot starts at ``now``
  (an ``assigned`` one only while nobody holds the slot);
- slots of the state that no old slot became open, as when the state is entered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping

from taskflow.core.clocks import clocks, deadlines
from taskflow.core.definition import migrations
from taskflow.core.definition.model import Slot
from taskflow.core.runs import opening, states
from taskflow.core.runs.decision import Decision
from taskflow.core.runs.model import CLAIMED, OPEN, PENDING, SlotView


def keep(decision: Decision, step: migrations.Step, renamed: Mapping[str, str]) -> None:
    """Apply ``step`` (a stay) to ``decision``, whose run is already on the new version and in
    the state it stays in; ``renamed``: the slots that changed state or name (id: old name)."""
    state = decision.state
    present = set()
    for view in decision.current():
        present.add(view.name)
        if not view.live:
            continue
        slot = state.slot(view.name)
        kept = _relabelled(decision, slot, view) if view.id in renamed else view
        if view.id in renamed:
            decision.log(
                "slot.renamed",
                slot_id=view.id,
                reason="migrated",
                slot=view.name,
                previous=renamed[view.id],
                state=view.state,
            )
        # Put even when unchanged: its timers are planned again by the new version's rules.
        decision.put(_restarted(decision, slot, kept, step.restart))
    for slot in state.slots:
        if slot.name not in present:
            states.open_slot(decision, state, slot)


def _relabelled(decision: Decision, slot: Slot, view: SlotView) -> SlotView:
    subject = decision.run.subject
    item = opening.item_of(view)
    if view.status == PENDING:
        return view
    return dataclasses.replace(
        view,
        label=opening.label_for(slot, subject, item),
        audience=opening.audience_for(slot, subject, item),
        delegates=opening.delegates_for(slot, subject, item, holder=view.holder),
        version=view.version + 1,
    )


def _restarted(
    decision: Decision, slot: Slot, view: SlotView, restart: Collection[str]
) -> SlotView:
    if view.status not in (OPEN, CLAIMED) or view.opened_at is None:
        return view
    now = decision.now
    subject = decision.run.subject
    ledger = []
    for c in view.clocks:
        ms = slot.milestone(c.milestone)
        if c.milestone in restart and c.met_at is None:
            budget = deadlines.milestone_budget(decision.definition, ms, subject) if ms else None
            ledger.append(clocks.start(c.milestone, budget or c.budget, now))
            decision.log(
                "clock.restarted",
                slot_id=view.id,
                reason="the migration restarts this clock",
                slot=view.name,
                milestone=c.milestone,
                started_at=c.started_at.isoformat(),
            )
        else:
            ledger.append(c)
    have = {c.milestone for c in ledger}
    for ms in slot.milestones:
        if ms.kind in have or (ms.kind == "assigned" and view.status == CLAIMED):
            continue
        budget = deadlines.milestone_budget(decision.definition, ms, subject)
        if budget is not None:
            ledger.append(clocks.start(ms.kind, budget, now))
    new = tuple(ledger)
    return view if new == view.clocks else dataclasses.replace(view, clocks=new)
