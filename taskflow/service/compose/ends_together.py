"""Several parents' ends read back in one write (docs/composition.md, "A parent's ends read
together"): the child lane, holding several parents' locks, resumes each parent whose rows
are all ends that went well (``child_outcomes.plain_ends``) with its own decision, and writes
them all as one unit of work, as a step batch writes its runs (``clocks/timer_batch``):
the rows settled in one statement, the parents' slots, clocks and timers loaded at once,
one merged write. A parent resumes in the time of a share of one transaction instead of a
transaction of its own (bench/compose.py's resume)."""

from __future__ import annotations

from collections.abc import Mapping

from taskflow.core.compose import compose
from taskflow.service.clocks import deadlines
from taskflow.service.clocks import timer_batch as runs_batch
from taskflow.service.compose import child_outcomes as outcomes
from taskflow.service.compose.lane_job import Job
from taskflow.service.runs import buffered, ids, persist, runs
from taskflow.store.compose import children as rows


async def resume_many(
    jobs: Mapping[str, Job], ended: Mapping[str, list[rows.ChildRow]]
) -> set[str]:
    """Resume the parents of ``jobs`` (locked, with their live slots) whose ``ended`` rows
    all went well, in one write; the parents it resumed (the others are read row by row).
    Fewer than two such parents: none (a parent alone goes the one-parent way)."""
    plain = await outcomes.plain_ends(jobs, ended)
    if len(plain) < 2:
        return set()
    first = next(iter(jobs.values()))
    services, conn, now = first.services, first.conn, first.now
    settled = [
        (row.id, outcome)
        for parent_id, ends in plain.items()
        for row, (_, outcome) in zip(ended[parent_id], ends, strict=True)
    ]
    await rows.settled_many(conn, settled, now)
    states = await runs_batch.load_views(conn, {p: jobs[p].parent.view for p in plain})
    for parent_id, ends in plain.items():
        state = states[parent_id]
        definition = runs.definition_for(services, state.run)
        slots = list(state.slots.values())
        result = compose.resumed_all(
            definition, state.run, slots, ends=ends, now=now, new_id=ids.new_id
        )
        runs_batch.outcome(state, result, deadlines.sla_of(services, definition, slots), now)
    await runs_batch.flush(conn, list(states.values()), now)
    # As after a step batch: events kept for slots just opened, and team calendars.
    parents = [s.run for s in states.values()]
    await buffered.after_batch(conn, services, parents, now, persist.write)
    await deadlines.opened_by_batch(
        services, conn, [(s.run, s.slots.values()) for s in states.values()], now
    )
    return set(plain)
