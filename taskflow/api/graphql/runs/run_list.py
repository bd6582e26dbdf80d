"""The ``runs`` query: find runs by workflow, state, status, subject, key and time windows."""

from __future__ import annotations

import uuid
from datetime import datetime

import strawberry

from taskflow import errors
from taskflow.api.graphql.common import listing, relay
from taskflow.api.graphql.common.context import Info, checked
from taskflow.api.graphql.operate import attention as _registers_attention_reason  # noqa: F401
from taskflow.api.graphql.runs.types import RunStatus, RunType
from taskflow.core.access.principals import Principal
from taskflow.core.operate.attention import Reason
from taskflow.core.runs.run_filter import RunFilter as CoreRunFilter
from taskflow.service.runs import run_list


@strawberry.input(description="Names the tracked entity a run is for.")
class SubjectKey:
    type: str | None = strawberry.field(default=None, description="Its type, e.g. expense.")
    external_id: str | None = strawberry.field(
        default=None, description="Its id in the application."
    )


@strawberry.input(description="A time window; a missing bound is open.")
class TimeWindow:
    from_: datetime | None = strawberry.field(
        default=None, name="from", description="From this instant (included)."
    )
    before: datetime | None = strawberry.field(
        default=None, description="Before this instant (excluded)."
    )


@strawberry.input(description="A state at an instant: runs that stood in it then.")
class StateAtFilter:
    state: str = strawberry.field(description="The state's name.")
    at: datetime = strawberry.field(
        description="The instant (no later than now, within the runs kept: OUTSIDE_RETENTION)."
    )


@strawberry.input(description="Narrows the runs list. All given filters must match.")
class RunFilter:
    workflow: str | None = strawberry.field(default=None, description="Only this workflow.")
    version: int | None = strawberry.field(
        default=None, description="Only this definition version (with workflow)."
    )
    state: str | None = strawberry.field(default=None, description="Only runs in this state.")
    status: list[RunStatus] | None = strawberry.field(
        default=None, description="Only runs with one of these statuses."
    )
    subject: SubjectKey | None = strawberry.field(
        default=None, description="Only runs of this tracked entity."
    )
    correlation_key: str | None = strawberry.field(
        default=None, description="Only runs with this correlation key."
    )
    started: TimeWindow | None = strawberry.field(
        default=None, description="Only runs started in this window."
    )
    ended: TimeWindow | None = strawberry.field(
        default=None, description="Only runs ended in this window (so ended runs only)."
    )
    needs_attention: bool | None = strawberry.field(
        default=None,
        description="True: only runs with an item on the needsAttention list (admins, and "
        "leads and managers for the workflows they operate; FORBIDDEN for anyone else); "
        "false: only runs without one.",
    )
    attention_reasons: list[Reason] | None = strawberry.field(
        default=None,
        description="Only runs needing attention for one of these reasons (implies "
        "needsAttention: true).",
    )
    state_at: StateAtFilter | None = strawberry.field(
        default=None,
        description="Only runs that stood in this state at this instant, after undos "
        "(docs/history.md).",
    )

    parent: strawberry.ID | None = strawberry.field(
        default=None, description="Only the child runs of this run (its global id)."
    )

    def to_filter(self) -> CoreRunFilter:
        if self.version is not None and self.workflow is None:
            raise errors.ValidationError(
                "A version filter needs a workflow: add filter.workflow.", field="version"
            )
        started, ended = self.started or TimeWindow(), self.ended or TimeWindow()
        return relay.copied(
            CoreRunFilter,
            self,
            status=tuple(str(s.value) for s in self.status) if self.status else None,
            subject_type=self.subject.type if self.subject else None,
            subject_external_id=self.subject.external_id if self.subject else None,
            started_from=started.from_,
            started_before=started.before,
            ended_from=ended.from_,
            ended_before=ended.before,
            attention_reasons=tuple(self.attention_reasons) if self.attention_reasons else None,
            # The ages and workflows the needs-attention list judges by: the service's to set.
            attention_windows=None,
            attention_workflows=None,
            parent=relay.local_id(self.parent, "Run", "parent") if self.parent else None,
            state_at=(self.state_at.state, self.state_at.at) if self.state_at else None,
        )


@strawberry.type
class RunListQueries:
    @listing.connection(RunFilter, "Narrow the list.", first=50, first_type=listing.FIRST_50)
    async def runs(
        self, info: Info, me: Principal, page: listing.Page, filter: RunFilter
    ) -> relay.Connection[RunType]:
        """Runs you may read, newest first (started, then id): leads, managers and applications
        see the runs their grants reach, anyone the runs they are involved in."""
        cursor = None
        if page.after:
            started, run_id = relay.decode_cursor(page.after, 2)
            try:
                cursor = (datetime.fromisoformat(started), str(uuid.UUID(run_id)))
            except ValueError:
                raise errors.ValidationError(
                    "The cursor is not one this list gave out.", field="after"
                ) from None
        found, total, has_next = await run_list.runs(
            info.context.services,
            me,
            filter.to_filter(),
            first=page.first,
            after=cursor,
            checked=await checked(info),
        )
        return relay.connection(
            found,
            RunType.of,
            lambda r: relay.encode_cursor(r.started_at.isoformat(), r.view.id),
            total=total,
            has_next=has_next,
        )
