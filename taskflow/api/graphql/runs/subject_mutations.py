"""``deleteSubject``: the tracked entity is gone; its live runs end (docs/runs-and-slots.md,
"When the subject is gone")."""

from __future__ import annotations

from typing import Annotated

import strawberry

from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.runs.types import RunType
from taskflow.api.graphql.slots import work_answers
from taskflow.api.graphql.slots.slot_type import Subject
from taskflow.core.access.principals import Principal
from taskflow.service.runs import subjects as subject_service


@strawberry.input(description="A tracked entity to delete, by its type and external id.")
class DeleteSubjectInput:
    type: str = strawberry.field(description="Its type.")
    external_id: str = strawberry.field(description="The application's id for it.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type(description="The subject is gone; the runs it had live have ended.")
class DeleteSubjectSuccess:
    subject: Subject = strawberry.field(description="The subject as stored (kept for history).")
    runs: list[RunType] = strawberry.field(
        description="The runs that were live, as they stand now: cancelled (reason "
        "subject-gone) or in the state their definition declares for it."
    )
    links_revoked: int = strawberry.field(description="How many unused magic links died.")


DeleteSubjectPayload = Annotated[
    DeleteSubjectSuccess | r.SubjectGone | relay.Common,
    strawberry.union("DeleteSubjectPayload", description="Result of deleteSubject."),
]


async def _deleted(
    info: Info, _: Principal, answer: keyed.Answer, __: bool
) -> DeleteSubjectSuccess:
    subject, runs = await work_answers.subject_and_runs(info, answer)
    return DeleteSubjectSuccess(subject=subject, runs=runs, links_revoked=answer["links"])


@strawberry.type
class SubjectMutations:
    @keyed.mutation(DeleteSubjectPayload, _deleted)
    async def delete_subject(
        self, info: Info, me: Principal, input: DeleteSubjectInput
    ) -> keyed.Answer:
        """Delete a tracked entity: each live run goes to its definition's subject_gone state
        or is cancelled (reason subject-gone), with its slots, timers and unused magic links;
        no later action on those runs and no new run for it is accepted (SubjectGone).
        Applications granted a workflow tracking its type (acting on the runs they started),
        and admins."""
        deleted = await subject_service.delete_subject(
            info.context.services, me, subject_type=input.type, external_id=input.external_id
        )
        s = deleted.subject
        return {
            "subject": [s.type, s.external_id, s.attributes],
            "runs": deleted.run_ids,
            "links": deleted.links_revoked,
        }
