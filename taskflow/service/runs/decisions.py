"""Decisions on a locked run (``runs.decide`` carries them out), and the one that deposits
an event on a slot, as staff (``slots.complete``), an application or a staff raiser
(``events.raise_event``), a magic link (``link_use``) and a kept event (``buffered``) make it.

A leaf of the service: it needs only ``ids`` (the new ids a decision mints), so ``buffered``
and ``persist`` can build on it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine
from taskflow.core.runs.model import Outcome, SlotView
from taskflow.service.runs import ids
from taskflow.store.runs import runs as rows

#: A decision on a locked run: (its definition, the run, its slots, now) -> what changed.
Decision = Callable[[Definition, rows.RunRow, list[SlotView], datetime], Outcome]


def depositing(
    slot_id: str,
    event: str | None,
    payload: Mapping[str, Any] | None,
    *,
    actor: str,
    actor_keys: frozenset[str],
    expected_version: int | None = None,
    on_behalf: bool = False,
) -> Decision:
    """The decision that deposits ``event`` with ``payload`` on slot ``slot_id`` (the run then
    settles); ``on_behalf``: the caller was admitted already (an application's grant, a magic
    link, a kept event checked when it arrived), the holder and candidate rules are not
    applied."""

    return made(
        engine.deposit,
        slot_id=slot_id,
        event=event,
        payload=payload,
        actor=actor,
        actor_keys=actor_keys,
        expected_version=expected_version,
        on_behalf=on_behalf,
    )


def made(verb: Callable[..., Outcome], **facts: Any) -> Decision:
    """The decision ``verb`` (an engine or operator verb that may open slots) makes on the
    locked run with ``facts``: ``verb(definition, run.view, slots, now=now,
    new_id=ids.new_id, **facts)``."""

    def decide(
        definition: Definition, run: rows.RunRow, slots: list[SlotView], now: datetime
    ) -> Outcome:
        return verb(definition, run.view, slots, now=now, new_id=ids.new_id, **facts)

    return decide
