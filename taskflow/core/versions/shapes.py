"""The shape of a deployed version read back from its recorded document (pure).

When a version's class has left the code (start-up let it go because a later
version declares a migration for its runs), the registry still holds its
document (``taskflow show``). A :class:`Shape` is what the migration checks and
the plan need of it: its states, whether they are terminal, and per slot its
name, whether it opens per item of a ``foreach``, its fields' types and
whether it has milestones. It answers the few attributes those read
(``states``, ``has_state``, ``state``; ``slots``, ``slot``; ``name``,
``foreach``, ``fields``, ``milestones``), like a loaded definition does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FieldShape:
    name: str
    type: str


@dataclass(frozen=True)
class SlotShape:
    name: str
    #: True when the slot opens per item of a ``foreach`` (None otherwise, as on a Slot).
    foreach: bool | None
    fields: tuple[FieldShape, ...]
    #: The milestone kinds it declares.
    milestones: tuple[str, ...]


@dataclass(frozen=True)
class StateShape:
    name: str
    terminal: bool
    slots: tuple[SlotShape, ...]

    def slot(self, name: str) -> SlotShape:
        return next(s for s in self.slots if s.name == name)


@dataclass(frozen=True)
class Shape:
    """A recorded version: its name, version and states."""

    name: str
    version: int
    states: tuple[StateShape, ...]

    def has_state(self, name: str) -> bool:
        return any(s.name == name for s in self.states)

    def state(self, name: str) -> StateShape:
        return next(s for s in self.states if s.name == name)


def _slot(doc: Mapping[str, Any]) -> SlotShape:
    return SlotShape(
        name=str(doc["name"]),
        foreach=True if doc.get("foreach") is not None else None,
        fields=tuple(
            FieldShape(str(f["name"]), str(f.get("type", "text"))) for f in doc.get("fields") or ()
        ),
        milestones=tuple(str(m["kind"]) for m in doc.get("milestones") or ()),
    )


def from_document(doc: Mapping[str, Any]) -> Shape:
    """The shape of a recorded document (``render.document``)."""
    return Shape(
        name=str(doc.get("name", "")),
        version=int(doc.get("version", 0)),
        states=tuple(
            StateShape(
                name=str(s["name"]),
                terminal=bool(s.get("terminal")),
                slots=tuple(_slot(x) for x in s.get("slots") or ()),
            )
            for s in doc.get("states") or ()
        ),
    )
