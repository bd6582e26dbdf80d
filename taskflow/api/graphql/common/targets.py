"""Bases of the mutation inputs that name their target first: the target's global id, said
once for every input on a run, slot, timer or webhook endpoint; and the place (workflow, state,
slot) that filters of slots start with. The schema never names the bases themselves; their
fields come first in each input."""

from __future__ import annotations

import strawberry

from taskflow import errors
from taskflow.api.graphql.common import relay


@strawberry.input
class OnRun:
    run_id: strawberry.ID = strawberry.field(description="The run's global id.")


@strawberry.input
class OnSlot:
    slot_id: strawberry.ID = strawberry.field(description="The slot's global id.")


@strawberry.input
class OnTimer:
    timer_id: strawberry.ID = strawberry.field(description="The timer's global id.")

    def local_timer_id(self) -> int:
        """The timer's own id; NOT_FOUND (on timerId) for an id that names no timer."""
        return relay.number_id(self.timer_id, "Timer", "timer", "timerId")


@strawberry.input
class OnEndpoint:
    endpoint_id: strawberry.ID = strawberry.field(description="The endpoint's global id.")

    def local_endpoint_id(self) -> str:
        """The endpoint's own id; NOT_FOUND (on endpointId) for an id of something else."""
        found_type, local = relay.from_global_id(str(self.endpoint_id), "endpointId")
        if found_type != "WebhookEndpoint":
            raise errors.NotFound(
                f"No webhook endpoint has the id {self.endpoint_id!r}.", field="endpointId"
            )
        return local


@strawberry.input
class SlotPlaceFilter:
    """The first three filters of a list of slots: where in a workflow the slots stand (a base
    like the targets above: each filter input that narrows slots by place starts with them)."""

    workflow: str | None = strawberry.field(default=None, description="Only this workflow.")
    state: str | None = strawberry.field(default=None, description="Only slots of this state.")
    slot: str | None = strawberry.field(default=None, description="Only slots of this name.")
