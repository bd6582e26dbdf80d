"""The child lane reading a child's end back (service/compose/children.py,
docs/composition.md): the outcome kept on the parent (one end, or a parent's ends together
as one decision), a refusal read as a failure, a compensation's end, a late saga step
undone."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from typing import Any

from taskflow.core.compose import compose
from taskflow.core.runs.model import ACTIVE, RUN_CANCELLED
from taskflow.service.clocks import deadlines
from taskflow.service.compose.lane_job import Job
from taskflow.service.runs import ids, runs
from taskflow.store.clocks import deadlines as clock_rows
from taskflow.store.compose import children as rows
from taskflow.store.runs import runs as run_rows


async def refused(job: Job, message: str) -> None:
    row = job.row
    outcome = compose.refused(row.workflow, message)
    why = f"child {row.label!r} could not start: {message}"
    await job.line(
        job.parent.view.id, "child.refused", why, label=row.label, child_workflow=row.workflow
    )
    await job.settle(outcome)  # first: the saga reads it settled when the parent moves
    if compose.compensates(row.subject) is not None:
        await compensated(job, outcome)
    elif row.awaited:
        await resume(job, outcome)


async def ended(job: Job) -> bool:
    row, conn, catalog = job.row, job.conn, job.services.catalog
    child = await run_rows.get_run(conn, row.child) if row.child is not None else None
    if child is None:
        await job.settle(None)
        return False
    definition = catalog.for_reading(child.view.workflow, child.view.definition_version)
    reason = None
    if child.view.status == RUN_CANCELLED:
        reason = await rows.cancel_reason(conn, child.view.id)
    slots = await deadlines.load_slots(conn, child.view.id)
    if definition is None:  # a version nobody recorded: no failure marks, no result
        definition = dataclasses.replace(catalog.get(child.view.workflow), result=())
    outcome = compose.ended(definition, child.view, slots, reason=reason)
    await job.settle(outcome)  # first: the saga reads it settled when the parent moves
    if compose.compensates(row.subject) is not None:
        await compensated(job, outcome)
    elif row.awaited and compose.current(job.parent.view, row.state, row.visit):
        await resume(job, outcome)
    else:
        why = "started bare" if not row.awaited else "the parent no longer waits for it"
        if compose.undoable(row.subject, outcome) and await rows.undo_late(conn, row.id, job.now):
            # A saga step done after its scope was left (a race's runner-up whose cancel
            # lost to its end): undone as the steps done before it left (docs/composition.md).
            why += f"; its compensation {row.subject['compensation']} starts"
        await job.line(
            job.parent.view.id,
            "child.ended",
            f"child {row.label!r} ended in {outcome['state']} ({why})",
            **compose.ended_details(row.label, outcome),
        )
    return False


def ends(left: list[rows.ChildRow]) -> list[rows.ChildRow]:
    """The rows ``ended`` at the head of ``left``."""
    return list(itertools.takewhile(lambda r: r.status == compose.ENDED, left))


Ends = list[tuple[str, dict[str, Any]]]


def _plain_rows(job: Job, ended: list[rows.ChildRow]) -> bool:
    """Whether a parent's ``ended`` rows may be read back as one decision, as far as the rows
    and the parent tell: each an awaited child of the state the parent waits in (no race,
    not the first of a race), none a compensation."""
    parent, catalog = job.parent, job.services.catalog
    definition = catalog.for_reading(parent.view.workflow, parent.view.definition_version)
    return not (
        len(ended) < 2
        or definition is None
        or parent.view.status != ACTIVE
        or definition.state(parent.view.state).await_first
        or any(
            r.child is None
            or not r.awaited
            or compose.compensates(r.subject) is not None
            or not compose.current(parent.view, r.state, r.visit)
            for r in ended
        )
    )


async def plain_ends(
    jobs: Mapping[str, Job], ended: Mapping[str, list[rows.ChildRow]]
) -> dict[str, Ends]:
    """The parents (of ``jobs``, by id) whose ``ended`` rows are all ends that went well and
    may be read back as one decision (:func:`_plain_rows`; no child cancelled or failed),
    each with its (label, outcome) per row; the children, their slots and clocks read once
    for every parent. A parent left out is read row by row: a failure, a race, a
    compensation, a bare child each have their own way."""
    wanted = {p: found for p, found in ended.items() if _plain_rows(jobs[p], found)}
    if not wanted:
        return {}
    conn, catalog = next(iter(jobs.values())).conn, next(iter(jobs.values())).services.catalog
    children = await run_rows.get_runs(conn, [str(r.child) for f in wanted.values() for r in f])
    by_run = await run_rows.slots_of_runs(conn, list(children))
    found = await clock_rows.with_clocks(conn, [s for slots in by_run.values() for s in slots])
    slots_of: dict[str, list[Any]] = {}
    for slot in found:
        slots_of.setdefault(slot.run_id, []).append(slot)
    plain: dict[str, Ends] = {}
    for parent_id, rows_of in wanted.items():
        outcomes: Ends = []
        for row in rows_of:
            child = children.get(str(row.child))
            if child is None or child.view.status == RUN_CANCELLED:
                break  # a cancel is a failure, with its reason: read on its own
            version = catalog.for_reading(child.view.workflow, child.view.definition_version)
            if version is None:  # a version nobody recorded: no failure marks, no result
                version = dataclasses.replace(catalog.get(child.view.workflow), result=())
            outcome = compose.ended(
                version, child.view, slots_of.get(child.view.id, []), reason=None
            )
            if outcome.get("failure"):
                break
            outcomes.append((row.label, outcome))
        else:
            plain[parent_id] = outcomes
    return plain


async def ended_together(job: Job, ended: list[rows.ChildRow]) -> bool:
    """Read several ends of one parent back as one decision (:func:`plain_ends`); False
    (nothing written) when they may not be, and the rows are read one at a time."""
    parent, conn = job.parent, job.conn
    plain = await plain_ends({parent.view.id: job}, {parent.view.id: ended})
    outcomes = plain.get(parent.view.id)
    if outcomes is None:
        return False
    settled = [(r.id, o) for r, (_, o) in zip(ended, outcomes, strict=True)]
    await rows.settled_many(conn, settled, job.now)
    await runs.decide(
        job.services,
        conn,
        parent.view.id,
        lambda definition, run, slots, at: compose.resumed_all(
            definition, run.view, slots, ends=outcomes, now=at, new_id=ids.new_id
        ),
        now=job.now,
    )
    return True


async def compensated(job: Job, outcome: Mapping[str, Any]) -> None:
    """A saga's compensation ended (or could not start): ``run.compensated`` when it ended
    well, else ``run.compensation_failed``, which parks the parent for an operator."""
    row = job.row
    details = compose.compensation_details(row.label, row.workflow, row.child, row.subject)
    kind = outcome.get("failure")
    attempt, attempts = compose.attempts(row.subject)
    if kind:
        why = f"compensation of step {row.label!r} failed ({kind}): {outcome.get('reason')}"
        if attempt < attempts:  # started again after its backoff: a new row, added once
            at = compose.next_attempt_at(row.subject, attempt + 1, job.now)
            await rows.again(job.conn, row.id, attempt + 1, job.now, at)
            why += f"; attempt {attempt + 1} of {attempts} to start at {at.isoformat()}"
        else:
            why += f"; no attempt left of {attempts}: an operator undoes the step"
        await job.line(job.parent.view.id, "run.compensation_failed", why, failure=kind, **details)
    else:
        why = f"compensated step {row.label!r}: {row.workflow} ended in {outcome.get('state')}"
        await job.line(job.parent.view.id, "run.compensated", why, **details)


async def resume(job: Job, outcome: Mapping[str, Any]) -> None:
    """Resume the parent (held by the caller) with the child's outcome: one decision."""
    label = job.row.label
    await runs.decide(
        job.services,
        job.conn,
        job.row.parent,
        lambda definition, run, slots, at: compose.resumed(
            definition, run.view, slots, label=label, outcome=outcome, now=at, new_id=ids.new_id
        ),
        now=job.now,
    )
