"""Operator verbs over a filter (``bulkOperate``): a dry-run count first, then at most a
limit of runs per call, one transaction per run.

The runs are those the ``runs`` list would show the caller for the same filter,
narrowed to the workflows the caller operates (the rest are counted as skipped for
access) and to those the verb applies to (live runs; runs with a dead timer). Each run
goes through the single-run verb (``service/operate/operate.py``, ``runs.cancel_run``,
``timer_admin``): its own transaction in the lock order, the actor and the reason on
its timeline, and its refusal counted by code instead of stopping the batch.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.runs import run_filter
from taskflow.service.access import access
from taskflow.service.clocks import timer_admin
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.operate import operate
from taskflow.service.runs import run_list as run_list_service
from taskflow.service.runs import runs as run_service
from taskflow.store.operate import bulk as store

#: The most runs one call changes (``limit``'s maximum and default).
MAX_LIMIT = 500
DEFAULT_LIMIT = 100
#: How many runs a dry run names.
SAMPLE = 10


class Verb(StrEnum):
    """What bulkOperate does to each run."""

    GOTO = "GOTO"
    PAUSE_CLOCKS = "PAUSE_CLOCKS"
    RESUME_CLOCKS = "RESUME_CLOCKS"
    CANCEL = "CANCEL"
    RETRY_DEAD_TIMERS = "RETRY_DEAD_TIMERS"
    DISCARD_DEAD_TIMERS = "DISCARD_DEAD_TIMERS"


#: Which runs a verb applies to (others count as not applicable; ``store.bulk.NEEDS``);
#: GOTO and CANCEL: live runs.
_NEEDS = {
    Verb.PAUSE_CLOCKS: "running_clock",
    Verb.RESUME_CLOCKS: "paused_clock",
    Verb.RETRY_DEAD_TIMERS: "dead_timer",
    Verb.DISCARD_DEAD_TIMERS: "dead_timer",
}


@dataclass(frozen=True)
class Outcome:
    """What bulkOperate found, and (unless a dry run) did."""

    dry_run: bool
    #: Runs the filter matches among those the caller may read.
    matched: int
    #: Of those, runs in workflows the caller may not operate: left alone.
    skipped_for_access: int
    #: Runs the caller may operate that the verb does not apply to (ended; no dead timer).
    not_applicable: int
    #: Runs the verb applies to, in all (this call handles up to ``limit`` of them).
    applicable: int
    #: Runs changed by this call (0 on a dry run).
    applied: int
    #: Runs of this call whose verb was refused, by refusal code.
    refused: dict[str, int]
    #: Runs this call took (a dry run: the first that it would take, up to ``SAMPLE``).
    run_ids: list[str]
    #: Applicable runs after the last one this call took: call again (with ``after``).
    remaining: int
    #: The last run this call took and when it started: ``after`` for the next call, which
    #: goes on past runs this one was refused on. None when it took none.
    last: tuple[datetime, str] | None = None


def _checked(verb: Verb, state: str | None, f: run_filter.RunFilter, reason: str) -> str:
    why = reason.strip()
    if not why:
        raise errors.ValidationError(
            "Say why (reason): it goes on each run's timeline with your id.", field="reason"
        )
    if verb == Verb.GOTO:
        if not state:
            raise errors.ValidationError("GOTO needs the target state (state).", field="state")
        if f.workflow is None:
            raise errors.ValidationError(
                "GOTO needs filter.workflow: states belong to a workflow.", field="filter"
            )
    elif state is not None:
        raise errors.ValidationError(f"state is for GOTO only, not {verb}.", field="state")
    return why


@retry.retried("operate runs in bulk")
async def bulk_operate(
    services: Services,
    actor: Principal,
    *,
    f: run_filter.RunFilter,
    verb: Verb,
    reason: str,
    state: str | None = None,
    dry_run: bool = True,
    limit: int = DEFAULT_LIMIT,
    after: tuple[datetime, str] | None = None,
) -> Outcome:
    """Count (``dry_run``) or apply ``verb`` to up to ``limit`` runs matching ``f`` (after
    the run ``after`` names, in (started, id) order)."""
    workflows = access.operate_workflows(actor, "operate runs in bulk")
    why = _checked(verb, state, f, reason)
    if not 0 < limit <= MAX_LIMIT:
        raise errors.ValidationError(
            f"limit must be between 1 and {MAX_LIMIT}; got {limit}.", field="limit"
        )
    if (
        f.workflow is not None
        and state is not None
        and not services.catalog.get(f.workflow, f.version).has_state(state)
    ):
        raise errors.ValidationError(f"{f.workflow} has no state {state!r}.", field="state")
    selection = store.Selection(
        f=run_list_service.prepared(services, actor, f),
        reach=run_filter.run_reach(actor),
        workflows=workflows,
        needs=_NEEDS.get(verb, "active"),
    )
    async with services.db.connection() as conn:
        taken = await store.take(conn, selection, after=after, limit=SAMPLE if dry_run else limit)
        last = (taken[-1][1], taken[-1][0]) if taken and not dry_run else None
        counted = await store.counts(conn, selection, beyond=last or after)
    done = Outcome(
        dry_run=dry_run,
        matched=counted.matched,
        skipped_for_access=counted.matched - counted.operable,
        not_applicable=counted.operable - counted.applicable,
        applicable=counted.applicable,
        applied=0,
        refused={},
        run_ids=[run_id for run_id, _ in taken],
        remaining=counted.beyond,
        last=last,
    )
    if dry_run:
        return done
    refused: Counter[str] = Counter()
    applied = 0
    for run_id in done.run_ids:
        try:
            await _one(services, actor, verb, run_id, why, state)
        except errors.TaskflowError as exc:
            refused[exc.code] += 1
        else:
            applied += 1
    return dataclasses.replace(done, applied=applied, refused=dict(refused))


async def _one(
    services: Services,
    actor: Principal,
    verb: Verb,
    run_id: str,
    reason: str,
    state: str | None,
) -> None:
    """The single-run verb on one run: its own transaction(s), its own timeline lines."""
    if verb == Verb.GOTO:
        assert state is not None
        await operate.goto(services, actor, run_id=run_id, state=state, reason=reason)
    elif verb == Verb.PAUSE_CLOCKS:
        await operate.pause_clocks(services, actor, run_id=run_id, reason=reason)
    elif verb == Verb.RESUME_CLOCKS:
        await operate.resume_clocks(services, actor, run_id=run_id, reason=reason)
    elif verb == Verb.CANCEL:
        await run_service.cancel_run(services, actor, run_id=run_id, reason=reason)
    else:
        async with services.db.connection() as conn:
            timers = await store.dead_timers(conn, [run_id])
        for _, timer_id in timers:
            if verb == Verb.RETRY_DEAD_TIMERS:
                await timer_admin.retry(services, actor, timer_id, reason=reason)
            else:
                await timer_admin.discard(services, actor, timer_id, reason)
