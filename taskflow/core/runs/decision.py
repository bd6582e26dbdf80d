"""The working copy of a run and its slots while one happening is decided.

A :class:`Decision` keeps the bookkeeping every engine step shares: the slots
as they become, which were created or changed, the timeline lines, and the
count of automatic transitions. The steps themselves live in
:mod:`.states` (entering, leaving, settling) and :mod:`.pausing` (what a
pausing state holds); :mod:`.engine` holds the entry points.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.clocks import deadlines, expiry
from taskflow.core.definition import actors, children
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.model import HookContext, State
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import refusals, statuses
from taskflow.core.runs.model import (
    ACTIVE,
    CANCELLED,
    OPEN,
    SATISFIED,
    AuditEntry,
    Outcome,
    RunView,
    SlotView,
)
from taskflow.core.slots import holding

#: More automatic transitions than this in one decision means a cycle of states nobody waits in.
MAX_TRANSITIONS = 50

NewId = Callable[[], str]


class EngineError(errors.InternalError):
    """The definition led the engine somewhere it cannot go (a hook failed, a cycle)."""

    code = "ENGINE_ERROR"


class Decision:
    """A working copy of a run and its slots while one happening is decided."""

    def __init__(
        self,
        definition: Definition,
        run: RunView,
        slots: Iterable[SlotView],
        *,
        now: datetime,
        actor: actors.Acting,
        new_id: NewId,
    ) -> None:
        self.definition = definition
        self.run = run
        self.now = now
        #: Who acted, as hooks and conditions read it (``ctx.actor``, ``actor.login``).
        self.acting = actors.of(actor)
        #: Who acted, as the timeline records it (a given timeline value is kept as is).
        self.actor = actor if isinstance(actor, str) or actor is None else actor.recorded
        self.new_id = new_id
        self.slots: dict[str, SlotView] = {s.id: s for s in slots}
        self.created: list[str] = []
        self.changed: set[str] = set()
        self.audit: list[AuditEntry] = []
        self.run_changed = False
        self.transitions = 0
        #: Values ``steps.once`` recorded in this decision's hooks (``core/steps/once.py``).
        self.once: dict[str, Any] = {}

    # -- bookkeeping ------------------------------------------------------------------------

    def log(
        self, kind: str, *, slot_id: str | None = None, reason: str | None = None, **details: Any
    ) -> None:
        self.audit.append(AuditEntry(kind, self.now, self.actor, slot_id, reason, details))

    def log_opened(self, view: SlotView) -> None:
        kind = "slot.opened" if view.status == OPEN else "slot.pending"
        self.log(
            kind,
            slot_id=view.id,
            slot=view.name,
            label=view.label,
            audience=str(view.audience),
            item_index=view.item_index,
        )

    def put(self, view: SlotView, *, created: bool = False) -> None:
        self.slots[view.id] = view
        if created:
            self.created.append(view.id)
        elif view.id not in self.created:
            self.changed.add(view.id)

    def set_run(self, **changes: Any) -> None:
        self.run = dataclasses.replace(self.run, **changes)
        self.run_changed = True

    def count_transition(self) -> None:
        self.transitions += 1
        if self.transitions > MAX_TRANSITIONS:
            raise EngineError(
                f"workflow {self.definition.name!r}: the run moved through {MAX_TRANSITIONS} "
                "states without waiting for anyone; check the routes for a cycle of states "
                "without slots."
            )

    def cancel_slots(
        self, views: Iterable[SlotView], *, reason: str, kind: str = "slot.cancelled"
    ) -> None:
        """Cancel the live ones among ``views``, each with a timeline line of ``kind``."""
        for view in list(views):
            if view.live:
                cancelled = dataclasses.replace(
                    view,
                    status=statuses.after(view.status, statuses.SlotMove.CANCEL),
                    cancelled_at=self.now,
                    version=view.version + 1,
                )
                self.put(holding.moved(cancelled, kind, self.now))
                self.log(kind, slot_id=view.id, reason=reason, slot=view.name)

    def cancel_live(self, *, reason: str) -> None:
        self.cancel_slots(self.current(), reason=reason)

    def outcome(self) -> Outcome:
        # Clocks start when a slot opens and are met when it is claimed or satisfied,
        # however the decision got there; one pass at the end sees every such slot.
        for slot_id in [*self.created, *self.changed]:
            view = self.slots[slot_id]
            if view.status != CANCELLED:
                self.slots[slot_id] = deadlines.sync_clocks(
                    self.definition, view, self.run.subject, self.now
                )
        if self.once:  # what a later decision on this run (in a batch) reads
            self.run = dataclasses.replace(self.run, once={**self.run.once, **self.once})
        return Outcome(
            run=self.run,
            created=tuple(self.slots[i] for i in self.created),
            changed=tuple(self.slots[i] for i in sorted(self.changed)),
            audit=tuple(self.audit),
            run_changed=self.run_changed,
            once=tuple(self.once.items()),
        )

    # -- reading ----------------------------------------------------------------------------

    @property
    def state(self) -> State:
        return self.definition.state(self.run.state)

    def current(self) -> list[SlotView]:
        """This visit's slots, in a stable order."""
        found = [s for s in self.slots.values() if s.visit == self.run.visit]
        return sorted(
            found, key=lambda s: (s.name, s.item_index if s.item_index is not None else -1)
        )

    def payloads(self) -> dict[str, Any]:
        """Deposited payloads by slot name (the latest visit wins; foreach slots give a list)."""
        by_name: dict[str, Any] = {}
        ordered = sorted(
            (s for s in self.slots.values() if s.status == SATISFIED),
            key=lambda s: (s.visit, s.item_index if s.item_index is not None else -1),
        )
        lists: dict[tuple[str, int], list[Any]] = {}
        for view in ordered:
            if view.item_index is None:
                by_name[view.name] = dict(view.payload or {})
            else:
                bucket = lists.setdefault((view.name, view.visit), [])
                bucket.append(dict(view.payload or {}))
                by_name[view.name] = bucket
        return by_name

    def env(self, principal: Any = None) -> ex.Env:
        return ex.Env(
            subject=self.run.subject,
            payload=self.payloads(),
            principal=principal,
            result=self.run.results,
            child=children.outcomes(self.run.results),
            actor=self.acting.as_value(),
            expired=expiry.counts(self.slots.values(), self.run.state, self.run.visit),
        )

    def hook_context(self, state: State) -> HookContext:
        return HookContext(
            workflow=self.definition.name,
            state=state.name,
            subject=self.run.subject,
            payload=self.payloads(),
            run_id=self.run.id,
            now=self.now,
            actor=self.acting,
        )

    # -- guards -----------------------------------------------------------------------------

    def require_active(self) -> None:
        if self.run.subject_gone:
            raise refusals.SubjectGone(
                "The run's subject was deleted; nothing more can happen on this run.",
            )
        if self.run.status != ACTIVE:
            raise refusals.RunNotActive(
                f"The run is {self.run.status}; nothing more can happen on it.",
                status=self.run.status,
            )
