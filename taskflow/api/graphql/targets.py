"""Bases of the mutation inputs that name their target first: the target's global id, said
once for every input on a run, slot, timer or webhook endpoint (the schema never names the
bases themselves; their field comes first in each input)."""

from __future__ import annotations

import strawberry


@strawberry.input
class OnRun:
    run_id: strawberry.ID = strawberry.field(description="The run's global id.")


@strawberry.input
class OnSlot:
    slot_id: strawberry.ID = strawberry.field(description="The slot's global id.")


@strawberry.input
class OnTimer:
    timer_id: strawberry.ID = strawberry.field(description="The timer's global id.")


@strawberry.input
class OnEndpoint:
    endpoint_id: strawberry.ID = strawberry.field(description="The endpoint's global id.")
