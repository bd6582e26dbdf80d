"""Automatic steps in GraphQL: ``Run.steps`` with their attempts, and ``retryStep``.

``node(id:)`` fetches a step again by its global id (the run's read rule).
Whoever may read a run sees its steps, their results and why attempts failed;
leads and managers granted the workflow, and admins, retry a parked step.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.scalars import JSON

from taskflow import errors
from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common.context import Info, caller, checked
from taskflow.api.graphql.common.enums import StepStatus
from taskflow.api.graphql.common.refusals import StaleVersion, StepNotParked
from taskflow.core.access.principals import Principal
from taskflow.service.steps import step_actions, step_admin

TYPE_NAME = "Step"


@strawberry.type(description="One attempt of an automatic step.")
class StepAttempt:
    attempt: int = strawberry.field(description="Its number, from 1, over the step's life.")
    worker: str | None = strawberry.field(description="The worker (host:pid) that ran it.")
    started_at: datetime = strawberry.field(description="When it started.")
    finished_at: datetime | None = strawberry.field(
        description="When it ended; null while it runs (or if its worker died)."
    )
    outcome: str = strawberry.field(
        description="running, succeeded, failed, lost (its worker's lease ran out) or discarded "
        "(it ended after another worker took the step)."
    )
    duration_ms: int | None = strawberry.field(description="How long the action ran (ms).")
    error_class: str | None = strawberry.field(description="The error's class, if it failed.")
    error_message: str | None = strawberry.field(description="The error's message (short).")
    traceback: str | None = strawberry.field(description="The last frames of its traceback.")


@strawberry.type(description="An automatic step of a run: a state's action, recurring work "
                 "(every) or a timeout's action.")  # fmt: skip
class Step(relay.Node):
    key: str = strawberry.field(description="Its stable name, e.g. <run>:<visit>:step.")
    kind: str = strawberry.field(
        description="action (an automatic state), entry (an action on entry beside slots), "
        "every or timeout."
    )
    state: str = strawberry.field(description="The state it belongs to.")
    visit: int = strawberry.field(description="The visit of that state it belongs to.")
    action: str = strawberry.field(
        description="The action's import path (module:function); a function defined in a "
        "workflow file shows its name alone."
    )
    status: StepStatus = strawberry.field(description="Where it stands.")
    attempt_count: int = strawberry.field(description="Attempts made so far.")
    due_at: datetime = strawberry.field(
        description="Its next attempt, or while RUNNING the end of the worker's lease."
    )
    result: JSON | None = strawberry.field(description="What the action returned, if it did.")
    last_error: str | None = strawberry.field(description="Its last error, Class: message.")
    created_at: datetime = strawberry.field(description="When it fell due first.")
    ended_at: datetime | None = strawberry.field(description="When it succeeded or failed.")
    attempts: list[StepAttempt] = strawberry.field(
        description="Every attempt, oldest first: when, by which worker, how it ended, how "
        "long it ran, and its error."
    )

    @classmethod
    def of(cls, row: step_admin.StepRecord) -> Step:
        return relay.copied(
            cls,
            row,
            action=step_actions.shown_path(row.action),
            status=StepStatus(row.status),
            attempt_count=row.attempts,
            attempts=[relay.copied(StepAttempt, a) for a in row.attempt_list],
        )


async def resolve_node(info: Info, local_id: str) -> Step | None:
    """``node(id:)`` for a step: whoever may read its run sees it (null otherwise)."""
    me = await caller(info)
    if not local_id.isdigit() or len(local_id) > 18:
        return None
    row = await step_admin.get(info.context.services, me, int(local_id))
    return Step.of(row) if row is not None else None


async def steps_of_run(info: Info, run_id: str) -> list[Step]:
    """``Run.steps``: the run's automatic steps, newest first (whoever may read the run)."""
    me = await caller(info)
    found = await step_admin.of_run(info.context.services, me, run_id, await checked(info))
    return [Step.of(s) for s in found]


# -- retrying a parked step ----------------------------------------------------------------------


@strawberry.type(description="The step is due again now.")
class RetryStepSuccess:
    step: Step = strawberry.field(description="The step as it stands now.")


@strawberry.input(description="Run a PARKED step again, due now, its attempts counted anew.")
class RetryStepInput:
    step_id: strawberry.ID = strawberry.field(description="The step's global id (Step.id).")
    expected_version: int | None = strawberry.field(
        default=None,
        description="The run's version you saw; refused (STALE_VERSION) if it changed since.",
    )
    reason: str | None = strawberry.field(
        default=None, description="Why, for the run's timeline (step.reopened)."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


RetryStepPayload = Annotated[
    RetryStepSuccess | StepNotParked | StaleVersion | relay.Common,
    strawberry.union("RetryStepPayload", description="Result of retryStep."),
]


def _step_id(global_id: str) -> int:
    return relay.number_id(global_id, TYPE_NAME, "step", "stepId")


async def step_success(
    info: Info, me: Principal, answer: keyed.Answer, _: bool
) -> RetryStepSuccess:
    """The step of a retryStep answer as it stands now (NOT_FOUND when gone)."""
    row = await step_admin.get(info.context.services, me, int(answer["step"]))
    if row is None:
        raise errors.NotFound("The step is gone.")
    return RetryStepSuccess(step=Step.of(row))


@strawberry.type
class StepMutations:
    @keyed.mutation(RetryStepPayload, step_success)
    async def retry_step(self, info: Info, me: Principal, input: RetryStepInput) -> keyed.Answer:
        """Run a PARKED automatic step again, due now, its retry policy's attempts counted anew
        (leads, managers, admins); a step.reopened line goes on the timeline."""
        step_id = _step_id(input.step_id)
        await step_admin.retry_step(
            info.context.services,
            me,
            step_id,
            expected_version=input.expected_version,
            reason=input.reason,
        )
        return {"step": step_id}
