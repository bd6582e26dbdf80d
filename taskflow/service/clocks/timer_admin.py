"""Timers as admins and leads see and mend them: the list, a run's timers, retry, discard.

A timer whose firing failed ``TASKFLOW_TIMER_MAX_ATTEMPTS`` times is parked
``dead`` (``core/clocks/timer_states.py``). An admin or lead reads why
(``timers(filter: {state: DEAD})``, ``Run.timers``), then either retries it
(armed again, due now, its attempts reset) or discards it with a reason that
goes on the run's timeline. Each change is one transaction that locks the run
before the timer.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.clocks import timer_states
from taskflow.core.clocks.timer_states import TimerMove, TimerStatus
from taskflow.core.common import refusals
from taskflow.core.runs.model import AuditEntry
from taskflow.service.access import access
from taskflow.service.common import retry as retries
from taskflow.service.common.container import Services
from taskflow.service.runs import persist
from taskflow.store.clocks import deadlines as timer_rows
from taskflow.store.clocks import timer_admin as store
from taskflow.store.common import db
from taskflow.store.runs import runs

TimerRow = timer_rows.TimerRow


TimerNotDead = refusals.TimerNotDead


async def listing(
    services: Services,
    actor: Principal,
    *,
    statuses: Sequence[TimerStatus] | None,
    run_id: str | None,
    after_id: int,
    limit: int,
) -> tuple[list[TimerRow], int]:
    """Timers in id order (``limit`` from ``after_id``) and how many match, for leads and admins."""
    workflows = access.timer_workflows(actor, "list timers")
    async with services.db.connection() as conn:
        return await store.listing(
            conn,
            statuses=[s.value for s in statuses] if statuses is not None else None,
            run_id=run_id,
            after_id=after_id,
            limit=limit,
            workflows=workflows,
        )


async def of_run(services: Services, actor: Principal, run_id: str) -> list[TimerRow] | None:
    """A run's timers for its workflow's leads and admins; None for anyone else."""
    async with services.db.connection() as conn:
        run = await runs.get_run(conn, run_id)
        if run is None or not access.may_keep_timers(actor, run.view.workflow):
            return None
        found, _ = await store.listing(conn, statuses=None, run_id=run_id, after_id=0, limit=10_000)
    return found


async def get(services: Services, actor: Principal, timer_id: int) -> TimerRow | None:
    """One timer, for its workflow's leads and admins (None: absent, or not theirs to see)."""
    async with services.db.connection() as conn:
        workflow = await store.workflow_of(conn, timer_id)
        if workflow is None or not access.may_keep_timers(actor, workflow):
            return None
        return await store.get(conn, timer_id)


def _line(kind: str, dead: TimerRow, actor: Principal, reason: str, now: datetime) -> AuditEntry:
    details = {"key": dead.key, "kind": dead.kind, "attempts": dead.attempts}
    return AuditEntry(
        kind, now, actor.id, dead.slot_id, reason, {**details, "error": dead.last_error}
    )


async def _dead(
    services: Services, conn: db.Connection, actor: Principal, timer_id: int, move: TimerMove
) -> TimerRow:
    workflow = await store.workflow_of(conn, timer_id)
    found = await store.lock(conn, timer_id)
    if found is None or workflow is None or not access.may_keep_timers(actor, workflow):
        # A timer out of the caller's grants answers as one that does not exist.
        raise errors.NotFound(f"No timer has the id {timer_id}.", field="timerId")
    if not timer_states.allows(found.status, move):
        raise TimerNotDead(
            f"The timer is {found.status}, not dead: only a timer parked after failing "
            f"{services.settings.timer_max_attempts} times can be retried or discarded.",
            status=found.status,
        )
    return found


@retries.retried("retry the timer")
async def retry(
    services: Services, actor: Principal, timer_id: int, *, reason: str | None = None
) -> TimerRow:
    """Arm a dead timer again, due now, with its attempts reset; the timeline says who did
    (and ``reason``, when given: bulkOperate's)."""
    access.timer_workflows(actor, "retry timers")
    now = services.clock.now()
    async with services.db.transaction() as conn:
        dead = await _dead(services, conn, actor, timer_id, TimerMove.RETRY)
        timer = await store.rearm(conn, timer_id, now)
        await persist.audit(
            conn,
            dead.run_id,
            _line(
                "timer.retried",
                dead,
                actor,
                reason or f"the dead {dead.kind} timer is armed again",
                now,
            ),
        )
    return timer


@retries.retried("discard the timer")
async def discard(services: Services, actor: Principal, timer_id: int, reason: str) -> TimerRow:
    """Give up on a dead timer; ``reason`` goes on the run's timeline."""
    access.timer_workflows(actor, "discard timers")
    if not reason.strip():
        raise errors.ValidationError(
            "Say why the timer is discarded (reason): it goes on the run's timeline.",
            field="reason",
        )
    now = services.clock.now()
    async with services.db.transaction() as conn:
        dead = await _dead(services, conn, actor, timer_id, TimerMove.DISCARD)
        discarded = timer_states.after(dead.status, TimerMove.DISCARD)
        timer = await store.set_status(conn, timer_id, discarded, now)
        await persist.audit(
            conn,
            dead.run_id,
            _line("timer.discarded", dead, actor, reason.strip(), now),
        )
    return timer
