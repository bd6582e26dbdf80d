"""Inbound events as declared by a workflow: who may raise each, and whether an early one waits.

A slot waits for an event (``waits_for``); an :class:`Event` declared on the
workflow adds rules about that event wherever it is raised::

    events = [
        Event("reviewed", raisers=who.role("finance") - who.id(subject.submitted_by)),
        Event("document-uploaded", buffer=Buffer(max=10, for_=real.days(7))),
    ]

``raisers`` is a ``who`` expression over the acting principal and the subject
(like candidates): a ``raiseEvent`` of that event is refused to anyone it does
not admit. ``buffer`` keeps an event that arrives while no slot waits for it
(at most ``max`` per run, each for ``for_`` of real time) and delivers it, in
arrival order, when a matching slot opens. Events not declared, or declared
without ``buffer``, are refused when nothing waits (``NO_SLOT_WAITING``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import timedelta
from typing import Any, Final

from taskflow.core.definition import audience as au
from taskflow.core.definition import budgets as bu

#: How many early events a run keeps per event when ``Buffer()`` gives no ``max``.
DEFAULT_BUFFER_MAX: Final = 10
#: How long an early event is kept when ``Buffer()`` gives no ``for_``.
DEFAULT_BUFFER_FOR: Final = bu.real.days(7)


@dataclass(frozen=True, eq=False)
class Buffer:
    """Keep up to ``max`` early events per run, each for ``for_`` (real time only)."""

    max: int = DEFAULT_BUFFER_MAX
    for_: bu.Budget = field(default_factory=lambda: DEFAULT_BUFFER_FOR)

    def keep_for(self) -> timedelta:
        """``for_`` as a duration (real time: a day is 24 hours)."""
        seconds = {"minutes": 60, "hours": 3600, "days": 86400}[self.for_.unit]
        return timedelta(seconds=self.for_.amount * seconds)

    def describe(self) -> str:
        """``up to 10 kept for 7 real days``."""
        return f"up to {self.max} kept for {self.for_}"

    def to_json(self) -> Any:
        """``{"max": 10, "for": <budget>}``."""
        return {"max": self.max, "for": self.for_.to_json()}


@dataclass(frozen=True, eq=False)
class Event:
    """Rules about one inbound event of the workflow (see the module docs)."""

    name: str
    _: KW_ONLY
    raisers: au.Who | None = None
    buffer: Buffer | None = None
    description: str | None = None

    def describe(self) -> str:
        """``reviewed: raised by role:finance; buffered (up to 10 kept for 7 real days)``."""
        parts = [f"raised by {au.describe(self.raisers)}" if self.raisers else "raised by anyone"]
        if self.buffer is not None:
            parts.append(f"buffered ({self.buffer.describe()})")
        return f"{self.name}: " + "; ".join(parts)

    def to_json(self) -> Any:
        """``{"name", "description", "raisers", "buffer"}``."""
        return {
            "name": self.name,
            "description": self.description,
            "raisers": au.to_json(self.raisers) if self.raisers is not None else None,
            "buffer": self.buffer.to_json() if self.buffer is not None else None,
        }


def may_raise(event: Event | None, keys: frozenset[str], subject: Mapping[str, Any]) -> bool:
    """True when a principal carrying ``keys`` may raise ``event`` on a run with ``subject``.

    An event with no declared ``raisers`` adds no rule (the slot's own rules still apply).
    """
    if event is None or event.raisers is None:
        return True
    return au.compile(event.raisers, subject).admits(keys)
