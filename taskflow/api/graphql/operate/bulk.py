"""``bulkOperate``: an operator verb over a runs filter, counted first (dry run), then
applied to at most ``limit`` runs a call, each run in its own transaction."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import Enum
from typing import Annotated, Any

import strawberry

from taskflow import errors
from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.runs.run_list import RunFilter
from taskflow.api.graphql.runs.types import RUN
from taskflow.core.access.principals import Principal
from taskflow.service.operate import bulk


@strawberry.enum(description="What bulkOperate does to each run.")
class BulkVerb(Enum):
    GOTO = strawberry.enum_value(
        bulk.Verb.GOTO.value,
        description="Move each live run to `state` (needs filter.workflow), as goto does.",
    )
    PAUSE_CLOCKS = strawberry.enum_value(
        bulk.Verb.PAUSE_CLOCKS.value, description="pauseClocks on each live run."
    )
    RESUME_CLOCKS = strawberry.enum_value(
        bulk.Verb.RESUME_CLOCKS.value, description="resumeClocks on each live run."
    )
    CANCEL = strawberry.enum_value(
        bulk.Verb.CANCEL.value, description="cancelRun on each live run (leads and admins)."
    )
    RETRY_DEAD_TIMERS = strawberry.enum_value(
        bulk.Verb.RETRY_DEAD_TIMERS.value,
        description="retryTimer on every dead timer of each run that has one.",
    )
    DISCARD_DEAD_TIMERS = strawberry.enum_value(
        bulk.Verb.DISCARD_DEAD_TIMERS.value,
        description="discardTimer on every dead timer of each run that has one.",
    )


@strawberry.input(description="An operator verb over the runs a filter matches.")
class BulkOperateInput:
    filter: RunFilter = strawberry.field(
        description="Which runs: as the runs query reads them for you."
    )
    verb: BulkVerb = strawberry.field(description="What to do to each run.")
    reason: str = strawberry.field(description="Why, for each run's timeline (required).")
    state: str | None = strawberry.field(
        default=None, description="GOTO only: the state to move the runs to."
    )
    dry_run: bool = strawberry.field(
        default=True,
        description="True (the default): only count, and name a sample; false: apply.",
    )
    after: str | None = strawberry.field(
        default=None,
        description="endCursor of the previous call: go on after the last run it took (past "
        "runs it was refused on).",
    )
    limit: int = strawberry.field(
        default=bulk.DEFAULT_LIMIT,
        description=f"The most runs one call changes, 1-{bulk.MAX_LIMIT} "
        f"(default {bulk.DEFAULT_LIMIT}); call again for the remaining ones.",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type(description="How many runs of a bulkOperate call one refusal stopped.")
class BulkRefusalCount:
    code: str = strawberry.field(
        description="The refusal's code, as the single-run mutation answers it (e.g. "
        "RUN_NOT_ACTIVE, CLOCKS_UNCHANGED, FORBIDDEN)."
    )
    runs: int = strawberry.field(description="How many runs it refused.")


@strawberry.type(description="What bulkOperate counted and, unless a dry run, did.")
class BulkOperateSuccess:
    dry_run: bool = strawberry.field(description="True when nothing was changed.")
    matched: int = strawberry.field(description="Runs the filter matches among those you may read.")
    skipped_for_access: int = strawberry.field(
        description="Of those, runs of workflows you may not operate: left alone."
    )
    not_applicable: int = strawberry.field(
        description="Runs you may operate that the verb does not apply to (ended runs; runs "
        "without a dead timer for the timer verbs)."
    )
    applicable: int = strawberry.field(
        description="Runs the verb applies to, in all (before this call)."
    )
    applied: int = strawberry.field(description="Runs this call changed (0 on a dry run).")
    refused: list[BulkRefusalCount] = strawberry.field(
        description="Runs this call took whose verb was refused, by code."
    )
    remaining: int = strawberry.field(
        description="Applicable runs after the last one this call took (a dry run: after "
        "`after`): call again with after: endCursor."
    )
    end_cursor: str | None = strawberry.field(
        description="Pass as `after` to the next call to go on after the last run this call "
        "took; null on a dry run or when it took none."
    )
    run_ids: list[strawberry.ID] = strawberry.field(
        description="Global ids of the runs this call took, oldest first (a dry run: the "
        "first ten it would take)."
    )


BulkOperatePayload = Annotated[
    BulkOperateSuccess | relay.Common,
    strawberry.union("BulkOperatePayload", description="Result of bulkOperate."),
]


async def _built(info: Info, _: Principal, answer: keyed.Answer, __: bool) -> BulkOperateSuccess:
    return _success(answer)


def _success(answer: dict[str, Any]) -> BulkOperateSuccess:
    return relay.copied(
        BulkOperateSuccess,
        answer,
        refused=[
            BulkRefusalCount(code=code, runs=n) for code, n in sorted(answer["refused"].items())
        ],
        run_ids=[relay.node_id(RUN, r) for r in answer["run_ids"]],
    )


def _cursor(after: str) -> tuple[datetime, str]:
    started, run_id = relay.decode_cursor(after, 2)
    try:
        return datetime.fromisoformat(started), str(uuid.UUID(run_id))
    except ValueError:
        raise errors.ValidationError(
            "The cursor is not one bulkOperate gave out.", field="after"
        ) from None


@strawberry.type
class BulkMutations:
    @keyed.mutation(BulkOperatePayload, _built, argument=relay.WHAT)
    async def bulk_operate(
        self, info: Info, me: Principal, input: BulkOperateInput
    ) -> keyed.Answer:
        """An operator verb (goto, pause or resume clocks, cancel, retry or discard dead timers)
        over the runs a filter matches, in the workflows you operate (admins, and leads and
        managers granted them). dryRun (the default) counts and changes nothing; otherwise up to
        limit runs are changed, each in its own transaction with your id and the reason on its
        timeline."""
        after = _cursor(input.after) if input.after else None
        done = await bulk.bulk_operate(
            info.context.services,
            me,
            f=input.filter.to_filter(),
            verb=bulk.Verb[input.verb.name],
            reason=input.reason,
            state=input.state,
            dry_run=input.dry_run,
            limit=input.limit,
            after=after,
        )
        return {
            "dry_run": done.dry_run,
            "matched": done.matched,
            "skipped_for_access": done.skipped_for_access,
            "not_applicable": done.not_applicable,
            "applicable": done.applicable,
            "applied": done.applied,
            "refused": done.refused,
            "remaining": done.remaining,
            "run_ids": done.run_ids,
            "end_cursor": relay.encode_cursor(done.last[0].isoformat(), done.last[1])
            if done.last
            else None,
        }
