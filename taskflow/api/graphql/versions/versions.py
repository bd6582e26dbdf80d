"""Definition versions in GraphQL: ``migrateRuns`` applies a declared run migration (admins)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import strawberry

from taskflow import errors
from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common.context import Info
from taskflow.core.access.principals import Principal
from taskflow.service.versions import run_migrations


@strawberry.enum(description="What a migration did to a run.")
class MigrationStep(Enum):
    STAY = strawberry.enum_value("stay", description="Put on the version; state and slots kept.")
    TO = strawberry.enum_value(
        "to", description="Old slots closed as migrated; a state of the version entered."
    )
    CANCEL = strawberry.enum_value("cancel", description="Cancelled with the declared reason.")


@strawberry.type(description="How many runs one kind of step migrated.")
class MigratedRuns:
    step: MigrationStep = strawberry.field(description="The step.")
    runs: int = strawberry.field(description="How many runs it migrated.")


@strawberry.type(description="The live runs the migration names were migrated.")
class MigrateRunsSuccess:
    migrated: list[MigratedRuns] = strawberry.field(
        description="Runs migrated per step (empty when nothing was left to do)."
    )
    batches: int = strawberry.field(description="Transactions it took.")


@strawberry.input(
    description="Migrate the live runs of a workflow to a version, by the migrations that "
    "version declares (see docs/versions.md)."
)
class MigrateRunsInput:
    workflow: str = strawberry.field(description="The workflow's name.")
    to_version: int = strawberry.field(description="The version to migrate runs to.")
    batch: int = strawberry.field(
        default=100, description="Runs per transaction (default 100, at most 1000)."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


MigrateRunsPayload = Annotated[
    MigrateRunsSuccess
    | relay.InvalidInput
    | relay.NotAllowed
    | relay.NotFoundRefusal
    | relay.WorkspaceLimitReached
    | relay.Keyed,
    strawberry.union("MigrateRunsPayload", description="Result of migrateRuns."),
]


async def _migrated(info: Info, _: Principal, answer: keyed.Answer, __: bool) -> MigrateRunsSuccess:
    return MigrateRunsSuccess(
        migrated=[
            MigratedRuns(step=MigrationStep(kind), runs=count)
            for kind, count in sorted(answer["by_kind"].items())
        ],
        batches=answer["batches"],
    )


@strawberry.type
class VersionMutations:
    @keyed.mutation(MigrateRunsPayload, _migrated)
    async def migrate_runs(
        self, info: Info, me: Principal, input: MigrateRunsInput
    ) -> keyed.Answer:
        """Apply the run migration a version declares (admins): stay, to a state, or cancel, per
        state of the earlier version; run.migrated on each run's timeline. Resumable: send it
        again to finish an interrupted one."""
        if not 1 <= input.batch <= 1000:
            raise errors.ValidationError("batch must be from 1 to 1000.", field="batch")
        applied = await run_migrations.apply_as(
            info.context.services, me, input.workflow, input.to_version, batch=input.batch
        )
        return {"by_kind": applied.by_kind, "batches": applied.batches}
