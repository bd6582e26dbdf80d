"""A workspace's limits, enforced (docs/workspaces.md, "Limits"): live runs at a start (a
request's, an owned subject's, a child's), open slots where a request opens them, and
authenticated requests per minute (counted in PostgreSQL, across processes). A refusal is
``WorkspaceLimitReached`` naming the limit, its value and the figure now; raised inside the
start's or move's transaction, it leaves nothing written."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

from taskflow.core.access.principals import Principal
from taskflow.core.runs.model import SlotView
from taskflow.core.runs.statuses import SlotStatus
from taskflow.core.workspaces.refusals import WorkspaceLimitReached
from taskflow.store.common import db
from taskflow.store.workspaces import limits, scope


async def admit_run(conn: db.Connection, subject_id: str) -> None:
    """Before a run of subject ``subject_id`` is inserted: refused when its workspace has as
    many live runs as it may. The workspace row stays locked to the end of the transaction,
    so two starts at the limit are one after the other: the second counts the first. A
    request whose workspace has no run limit (its caller's row says) spends no statement."""
    over = await admit_runs(conn, [subject_id])
    if over is not None:
        raise over[1]


async def admit_runs(
    conn: db.Connection, subject_ids: Sequence[str]
) -> tuple[int, WorkspaceLimitReached] | None:
    """:func:`admit_run` for runs about to be inserted together, in order, on subjects of one
    workspace (a worker starting children): the index of the first its workspace's run
    limit refuses, with the refusal it gets as if started one by one (the runs before it
    fit); None when all fit."""
    if not subject_ids or (scope.WORKSPACE.get() != scope.EVERY and not scope.RUNS_LIMITED.get()):
        return None
    found = await limits.runs(conn, subject_ids[0])
    if found is None:
        return None
    allowed, live = found
    first = max(allowed - live, 0)
    if first >= len(subject_ids):
        return None
    return first, WorkspaceLimitReached(limit="runs", allowed=allowed, current=live + first)


async def admit_opened(conn: db.Connection, run_id: str, written: tuple[SlotView, ...]) -> None:
    """After a request's decision on run ``run_id`` wrote ``written`` slots: refused when the
    slots it opened take its workspace over its open-slot limit. A worker's decisions (a
    timer's, a step's: consequences of work admitted before) are not refused."""
    opened = sum(1 for s in written if s.status == SlotStatus.OPEN)
    if not opened or scope.WORKSPACE.get() == scope.EVERY or not scope.SLOTS_LIMITED.get():
        return
    found = await limits.open_slots(conn, run_id)
    if found is not None and found[1] > found[0]:
        before = found[1] - opened
        raise WorkspaceLimitReached(limit="open_slots", allowed=found[0], current=before)


@dataclasses.dataclass
class RequestRates:
    """Authenticated requests per workspace and minute, counted in PostgreSQL
    (``workspace_request_minute``): every process adds to the same row, so a server of N
    processes holds a workspace to its limit, exactly (the count and the check are one
    statement). A workspace without a limit spends nothing."""

    async def admit(self, database: db.Database, principal: Principal, now: datetime) -> None:
        """Count one request of ``principal``'s workspace; refused over its limit (the
        refused request is not counted)."""
        allowed = principal.workspace_requests_per_minute
        if allowed is None or not principal.workspace:
            return
        minute = now.replace(second=0, microsecond=0)
        async with database.connection() as conn:
            counted = await limits.count_request(conn, principal.workspace, minute, allowed)
        if counted is None:
            raise WorkspaceLimitReached(
                limit="requests_per_minute", allowed=allowed, current=allowed
            )
