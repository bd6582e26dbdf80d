"""The worker's lane for child runs (docs/composition.md).

The rows a worker has to act on are taken a parent at a time: all of one parent's due rows
in one transaction, in the lock order: the parent's run, its live slots, then each row
(``FOR UPDATE``), whose status is read again under those locks, so two workers never act on
one row twice. One transaction per parent, not per row: a parent's ten children start in
one commit, and its ten ends resume it in one (bench/compose.py). Rows to cancel or read
back come before rows to start, so a parent is resumed as soon as a pass sees its child's
end, not after every start queued before it (the child's end NOTIFYs the workers):

- ``starting``: start the child run on its workflow's current version (or record why it
  could not start: an awaited child that cannot start fails with kind ``refused``);
- ``cancelling``: the parent was cancelled; cancel the child, naming the cause (its own
  children follow the same way, through their rows);
- ``ended``: the child ended (the trigger noted it in the child's own statement); read its
  outcome and resume the parent once, or note it when the parent no longer waits.

The row is settled in the same transaction as what it caused: a worker killed anywhere
leaves the row as it was, and the next pass does the work once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from taskflow.core.compose import compose
from taskflow.core.definition import actors, owning
from taskflow.core.runs import engine, refusals
from taskflow.core.runs.model import RUN_CANCELLED, AuditEntry
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.compose import child_outcomes as outcomes
from taskflow.service.compose import ends_together
from taskflow.service.compose.lane_job import SYSTEM as SYSTEM
from taskflow.service.compose.lane_job import Job
from taskflow.service.runs import decisions, runs, starting
from taskflow.store.common import locks
from taskflow.store.compose import children as rows
from taskflow.store.runs import runs as run_rows
from taskflow.store.runs import timeline
from taskflow.store.workspaces import scope as workspace_scope

#: Rows taken per pass.
BATCH = 100
#: Parents whose children start in one transaction, at most (their rows are taken a parent
#: after the other, all of one before the next: a parent's children start together, so they
#: tend to end together and are read back as one decision).
TOGETHER = 10


async def run_due(services: Services, batch: int = BATCH, *, starts: bool = True) -> int:
    """Act on up to ``batch`` rows due, a parent at a time; returns how many were acted on.
    ``starts``: start children too (the worker's pass), else only read ends back and cancel
    (the worker's lane of ends, which resumes parents beside its other work).

    A parent taken is acted on for all its due rows (up to the batch), wherever they stand
    in the queue: its children start together. Parents of one workspace with only children
    to start are taken together, their children started in one set-based start. The rows
    due are read again before each parent: a child that ended meanwhile (the step pipeline
    writes ends beside this lane) is read back before the next parent's children start, so
    a parent's resume waits for one transaction's starts at most, not a whole batch."""
    tried: set[str] = set()
    done = 0
    while done < batch:
        async with services.db.connection() as conn:
            due = await rows.due(conn, batch - done, services.clock.now(), starts=starts)
        parents = _together([d for d in due if d.parent not in tried], batch - done)
        if not parents:
            break
        tried.update(parents)
        act = _acting(services, parents, batch - done, starts)
        done += await retry.run(services, "a child run", act)
    return done


def _together(due: list[rows.Due], limit: int) -> list[str]:
    """The parents to act on in one transaction: the first due; and with it the next parents
    of its workspace, up to about ``limit`` rows and :data:`TOGETHER` parents, when the first
    and they have only children to start (one set-based start) or only ends to read back
    (one write: ``ends_together``)."""
    if not due:
        return []
    first = due[0]
    busy = {d.parent for d in due if d.status != compose.STARTING}
    if first.parent not in busy:
        return _grouped(due, first, busy, limit)
    mixed = {d.parent for d in due if d.status != compose.ENDED}
    return [first.parent] if first.parent in mixed else _grouped(due, first, mixed, limit)


def _grouped(due: list[rows.Due], first: rows.Due, excluded: set[str], limit: int) -> list[str]:
    """``first``'s parent and the next parents of its workspace not ``excluded``, in order,
    up to about ``limit`` rows and :data:`TOGETHER` parents."""
    count: dict[str, int] = {}
    for d in due:
        if d.parent not in excluded and d.workspace == first.workspace:
            if d.parent not in count and (sum(count.values()) >= limit or len(count) >= TOGETHER):
                break
            count[d.parent] = count.get(d.parent, 0) + 1
    return list(count)


def _acting(
    services: Services, parents: list[str], limit: int, starts: bool
) -> Callable[[], Awaitable[int]]:
    return lambda: _act(services, parents, limit, starts)


async def in_flight(services: Services) -> int:
    """Children started or to start and not settled (the gauge)."""
    async with services.db.connection() as conn:
        return await rows.in_flight(conn)


async def _act(services: Services, parents: list[str], limit: int, starts: bool) -> int:
    """Act on up to ``limit`` rows due of ``parents`` (one; or several of one workspace with
    only children to start, or only ends to read back), in one transaction; how many."""
    async with services.db.transaction() as conn:
        if len(parents) == 1:
            one = await run_rows.get_run(conn, parents[0], lock=True)
            held = {} if one is None else {parents[0]: one}
        else:
            held = await run_rows.get_runs_locked(conn, parents)
        if not held:
            return 0
        # What it creates (a child's subject) is the parents' workspace's: docs/workspaces.md.
        await workspace_scope.enter_run(conn, next(iter(held)))
        await locks.lock_live_slots(conn, list(held))
        now = services.clock.now()
        by_parent: dict[str, list[rows.ChildRow]] = {}
        for row in await rows.lock_due_of(conn, list(held), limit, now, starts=starts):
            by_parent.setdefault(row.parent, []).append(row)
        jobs = {p: Job(services, conn, held[p], found[0], now) for p, found in by_parent.items()}
        done, handled = await _start_together(jobs, by_parent) if len(jobs) > 1 else (0, set())
        if len(jobs) > 1:  # parents with only ends: resumed in one write
            only_ends = {
                p: found
                for p, found in by_parent.items()
                if p not in handled and all(r.status == compose.ENDED for r in found)
            }
            resumed = await ends_together.resume_many(jobs, only_ends)
            done += sum(len(only_ends[p]) for p in resumed)
            handled |= resumed
        for parent_id, left in by_parent.items():
            if parent_id not in handled:
                done += await _act_rows(jobs[parent_id], left)
        return done


async def _start_together(
    jobs: Mapping[str, Job], by_parent: Mapping[str, list[rows.ChildRow]]
) -> tuple[int, set[str]]:
    """Start the children of several parents in one set-based start: the parents whose rows
    are all to start, in the state they wait in, each child's start checked. Returns how
    many rows it started and the parents it handled; when one child is refused nothing of
    it is kept (a savepoint) and each parent goes its own way (:func:`_act_rows`)."""
    begins: list[starting.Begin] = []
    owners: list[tuple[Job, rows.ChildRow]] = []
    handled: set[str] = set()
    for parent_id, found in by_parent.items():
        job = jobs[parent_id]
        if any(r.status != compose.STARTING or _stale(job, r) for r in found):
            continue
        try:
            mine = [_begin(dataclasses.replace(job, row=r)) for r in found]
        except starting.REFUSABLE:
            continue
        begins += mine
        owners += [(job, r) for r in found]
        handled.add(parent_id)
    if len(handled) < 2:
        return 0, set()
    try:
        async with next(iter(jobs.values())).conn.transaction():
            views = await starting.begin_many(
                owners[0][0].services, owners[0][0].conn, begins, owners[0][0].now
            )
    except starting.Refused:
        return 0, set()
    await _record_started(
        [(job, row, view.id) for (job, row), view in zip(owners, views, strict=True)]
    )
    return len(views), handled


def _stale(job: Job, row: rows.ChildRow) -> bool:
    """A row to start whose state its parent left (compensations start whatever the state)."""
    return compose.compensates(row.subject) is None and not compose.current(
        job.parent.view, row.state, row.visit
    )


async def _act_rows(job: Job, left: list[rows.ChildRow]) -> int:
    """Act on one parent's due rows (locked, in order), the parent's lock held; how many."""
    parent_id, done = job.parent.view.id, 0
    while left:
        row = left[0]
        job = dataclasses.replace(job, row=row)
        if row.status == compose.STARTING:
            # The run of rows to start, together: one set-based start (docs/composition.md).
            run = list(itertools.takewhile(lambda r: r.status == compose.STARTING, left))
            acted, rest = await _start(job, run)
            done += acted
            if rest is None:  # all started (or settled): the parent did not move
                left = left[len(run) :]
                continue
            left = rest + left[len(run) :]
        elif row.status == compose.ENDED and await outcomes.ended_together(
            job, outcomes.ends(left)
        ):
            # A parent's ends read together: one decision (its routes once all are back).
            done += len(outcomes.ends(left))
            left = left[len(outcomes.ends(left)) :]
        else:
            left.pop(0)
            if row.status == compose.CANCELLING:
                await _cancel(job)
            elif row.status == compose.ENDED:
                await outcomes.ended(job)
            else:
                continue  # another worker got there first
            done += 1
        # It may have moved the parent (a resume, a refusal read as a failure) and,
        # through it, the other rows (a cancel settles those not started): the next
        # row reads both as they now stand (still locked).
        parent = await run_rows.get_run(job.conn, parent_id, lock=True) or job.parent
        job = dataclasses.replace(job, parent=parent)
        left = await rows.lock_many(job.conn, [r.id for r in left])
    return done


async def _start(job: Job, starts: list[rows.ChildRow]) -> tuple[int, list[rows.ChildRow] | None]:
    """Start the children of ``starts`` (rows ``starting``, in order) as one set-based start,
    as starting them one by one would: a row whose state the parent left is settled; the
    first child that cannot start is refused (``child.refused``) after those before it
    started, and the rows after it are left for the caller to read again (the refusal may
    have moved the parent). Returns (rows acted on, rows left after a refusal or None)."""
    stale = [r for r in starts if _stale(job, r)]
    for row in stale:
        reason = "the parent left the state before the child started"
        await dataclasses.replace(job, row=row).settle(
            {"state": None, "failure": None, "reason": reason}
        )
    fresh = [r for r in starts if r not in stale]
    begins: list[starting.Begin] = []
    refusal: tuple[int, str] | None = None
    for i, row in enumerate(fresh):
        try:
            begins.append(_begin(dataclasses.replace(job, row=row)))
        except starting.REFUSABLE as error:
            refusal = (i, error.message)
            break
    try:
        async with job.conn.transaction():  # a refusal leaves nothing of the attempt behind
            views = await starting.begin_many(job.services, job.conn, begins, job.now)
    except starting.Refused as refused:
        refusal = (refused.index, refused.error.message)
        views = await starting.begin_many(job.services, job.conn, begins[: refused.index], job.now)
    started = [(job, row, view.id) for row, view in zip(fresh, views, strict=False)]
    await _record_started(started)
    if refusal is None:
        return len(stale) + len(started), None
    at, message = refusal
    await outcomes.refused(dataclasses.replace(job, row=fresh[at]), message)
    return len(stale) + len(started) + 1, fresh[at + 1 :]


async def _record_started(started: list[tuple[Job, rows.ChildRow, str]]) -> None:
    """The rows live and the lines of their starts, on each parent and on each child (one
    statement each for all of them): (the parent's job, the row, the child run) each."""
    if not started:
        return
    conn, now = started[0][0].conn, started[0][0].now
    await rows.started(conn, [(row.id, child) for _, row, child in started], now)
    lines: list[tuple[str, AuditEntry]] = []
    for job, row, child in started:
        parent = job.parent.view
        undoing = compose.compensates(row.subject)
        if undoing is not None:
            why = f"compensating step {undoing!r}: started {row.workflow} run {child}"
            details = compose.compensation_details(row.label, row.workflow, child, row.subject)
        else:
            why = f"started child {row.label!r}: {row.workflow} run {child}"
            details = {"label": row.label, "child_run": child, "child_workflow": row.workflow}
        kind = "child.started" if undoing is None else "run.compensating"
        lines.append((parent.id, job.entry(kind, why, **details)))
        why = f"started by {parent.workflow} run {parent.id} as {row.label!r}"
        link = {"label": row.label, "parent_run": parent.id, "workflow": parent.workflow}
        lines.append((child, job.entry("run.parent", why, **link)))
    await timeline.append_audits(conn, lines)


def _begin(job: Job) -> starting.Begin:
    """The start of the row's child on its workflow's current version, on the subject the
    row names, as ``startRun`` would (``starting.begin_many``): the system acts
    (``ctx.actor``), the parent's starter is recorded as the child's. Attributes writing the
    field a workflow owns on the child's subject type are refused (``OwnedField``), as
    ``upsertSubject`` refuses them."""
    parent, row = job.parent, job.row
    definition = job.services.catalog.get(row.workflow)
    spec: Mapping[str, Any] = row.subject
    external = spec.get("external_id") or parent.subject.external_id
    same = definition.tracks == parent.subject.type and external == parent.subject.external_id
    given = spec.get("attributes")
    attributes = dict(parent.view.subject if same or given is None else given)
    owning.check_writes(job.services.catalog.owners.get(definition.tracks), attributes)
    starter = starting.Starter(actors.SYSTEM_ACTOR, parent.started_by or SYSTEM)
    return starting.Begin(definition, starter, (definition.tracks, str(external), attributes))


async def _cancel(job: Job) -> bool:
    row = job.row
    if job.parent.view.status == RUN_CANCELLED:
        reason = compose.cause(row.parent, await rows.cancel_reason(job.conn, row.parent))
    else:
        reason = f"its parent run {row.parent} left {row.state} and no longer waits for it"
    if row.child is not None:
        with contextlib.suppress(refusals.RunNotActive):  # it ended first: its end stands
            await runs.decide(
                job.services,
                job.conn,
                row.child,
                decisions.made(engine.cancel, reason=reason, actor=SYSTEM),
                now=job.now,
            )
    await job.settle(None)
    return False
