"""The object types of a run's moves and timeline: MoveOption (with its CheckItem
checklist) and TimelineEntry (also importable from ``types``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from taskflow.service import views


@strawberry.type(description="One item of a checklist: a named precondition and whether it holds.")
class CheckItem:
    name: str = strawberry.field(description="What must be true.")
    holds: bool | None = strawberry.field(description="True, false, or null when unknown.")
    condition: str = strawberry.field(description="The condition, in words.")


@strawberry.type(description="A manual move of the run's current state, as it stands now.")
class MoveOption:
    name: str = strawberry.field(description="Pass as move to the move mutation.")
    label: str | None = strawberry.field(description="A human label, when declared.")
    to: str = strawberry.field(description="The state it leads to.")
    allowed: bool = strawberry.field(description="Whether the caller may make it now.")
    guard: bool | None = strawberry.field(description="The guard's value (null: unknown).")
    guard_text: str | None = strawberry.field(description="The guard, in words.")
    checklist: list[CheckItem] = strawberry.field(description="Its preconditions.")
    reasons: list[str] = strawberry.field(description="Why it is not allowed (empty if it is).")


def move_options(options: Sequence[views.MoveOption]) -> list[MoveOption]:
    return [
        MoveOption(
            name=o.name,
            label=o.label,
            to=o.to,
            allowed=o.allowed,
            guard=o.guard,
            guard_text=o.guard_text,
            checklist=[
                CheckItem(name=c.name, holds=c.holds, condition=c.condition) for c in o.checklist
            ],
            reasons=list(o.reasons),
        )
        for o in options
    ]


@strawberry.type(description="One line of a run's timeline: who did what, when, and why.")
class TimelineEntry:
    id: strawberry.ID = strawberry.field(
        description="Position on the timeline, its total order: a larger id was decided later "
        "(the list comes in this order; compare ids as integers)."
    )
    kind: str = strawberry.field(description="What happened, e.g. slot.claimed, refused.")
    actor: str | None = strawberry.field(description="Who did it (null: taskflow itself).")
    reason: str | None = strawberry.field(description="Why, in words.")
    details: JSON = strawberry.field(description="The facts of the happening.")
    at: datetime = strawberry.field(
        description="When: the one instant of the decision that wrote the line (every line of "
        "one decision has the same)."
    )
    slot_id: strawberry.ID | None = strawberry.field(description="Global id of the slot, if any.")
