"""Instantiating a state's slots: foreach expansion, armed, after, audience, label, priority."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from taskflow.core.definition import audience as au
from taskflow.core.definition import labels, runtime, sla
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.model import Slot, State
from taskflow.core.runs.model import CANCELLED, OPEN, PENDING, SATISFIED, SlotView

NOBODY = au.Audience(keys=frozenset())


def audience_for(slot: Slot, subject: Mapping[str, Any], item: Any) -> au.Audience:
    """Who may act on an instance of ``slot`` (nobody when no candidates are declared)."""
    if slot.candidates is None:
        return NOBODY
    return au.compile(slot.candidates, subject, item)


def delegates_for(
    slot: Slot, subject: Mapping[str, Any], item: Any, holder: str | None = None
) -> au.Audience:
    if slot.delegates is None:
        return NOBODY
    return au.compile(slot.delegates, subject, item, holder=holder, candidates=slot.candidates)


def label_for(
    slot: Slot, subject: Mapping[str, Any], item: Any, results: Mapping[str, Any] | None = None
) -> str:
    template = slot.label or slot.name.replace("_", " ").capitalize()
    return labels.render_label(template, subject, item, result=results)


def satisfied_names(state: State, slots: Iterable[SlotView]) -> set[str]:
    """Names of the state's slots whose every live instance is satisfied.

    A slot with no live instance (disarmed, or a foreach over nothing) counts
    as satisfied, so that ``after`` on it never blocks forever.
    """
    by_name: dict[str, list[SlotView]] = {s.name: [] for s in state.slots}
    for view in slots:
        if view.status != CANCELLED and view.name in by_name:
            by_name[view.name].append(view)
    return {name for name, views in by_name.items() if all(v.status == SATISFIED for v in views)}


def instantiate(
    state: State,
    slot: Slot,
    *,
    run_id: str,
    visit: int,
    subject: Mapping[str, Any],
    satisfied: set[str],
    now: datetime,
    new_id: Callable[[], str],
    results: Mapping[str, Any] | None = None,
) -> list[SlotView]:
    """The instances of ``slot`` for this visit: none when disarmed, one per foreach element
    (``results``: what automatic steps returned, for labels reading ``result``)."""
    env = ex.Env(subject=subject)
    if not runtime.is_armed(slot, env):
        return []
    items: Sequence[Any] | None = runtime.foreach_items(slot, subject)
    elements: list[tuple[int | None, Any]] = (
        [(None, ex.MISSING)] if items is None else list(enumerate(items))
    )
    status = OPEN if runtime.may_open(slot, satisfied) else PENDING
    views = []
    for index, item in elements:
        views.append(
            SlotView(
                id=new_id(),
                run_id=run_id,
                visit=visit,
                state=state.name,
                name=slot.name,
                waits_for=slot.waits_for,
                status=status,
                audience=audience_for(slot, subject, item),
                delegates=delegates_for(slot, subject, item),
                priority=sla.resolve_priority(slot.priority_rule, subject, item),
                label=label_for(slot, subject, item, results),
                item_index=index,
                item=None if item is ex.MISSING else item,
                opened_at=now if status == OPEN else None,
            )
        )
    return views


def item_of(view: SlotView) -> Any:
    """The foreach element of an instance, as expressions read it."""
    return ex.MISSING if view.item_index is None else view.item
