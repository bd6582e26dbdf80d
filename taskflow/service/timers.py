"""Firing due timers (the worker's work; ``run_due`` for tests), SKIP LOCKED, one transaction.

One batch is one transaction. Its timers are locked with ``FOR UPDATE SKIP
LOCKED`` (another worker never gets them), then their runs with ``SKIP LOCKED``
too: a run busy in a use case is left for the next pass rather than waited
for, because that use case may be about to move these very timer rows (waiting
both ways would deadlock). Each timer runs in a savepoint: a firing that fails
is postponed and logged without undoing the others. ``fired`` counts firings;
a repeating reminder's row is re-armed in place for its next firing by the
same reconcile that every use case runs.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import asyncpg

from taskflow.core import deadlines, firing
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine
from taskflow.core.runs.model import LIVE, AuditEntry, Outcome, RunView, SlotView
from taskflow.service import deadlines as sla_service
from taskflow.service import notices as notice_rows
from taskflow.service import persist
from taskflow.service.container import Services
from taskflow.store import db
from taskflow.store import deadlines as store
from taskflow.store import notifications as outbox
from taskflow.store import runs as rows

log = logging.getLogger("taskflow.worker")

#: A firing that failed is tried again this much later.
RETRY_AFTER = timedelta(seconds=30)
DEFAULT_BATCH = 100
#: The channel workers LISTEN on; arming a timer NOTIFYs it at commit.
CHANNEL = store.CHANNEL


async def run_due(services: Services, now: datetime, *, batch: int = DEFAULT_BATCH) -> int:
    """Fire every timer due at ``now`` (tests step time with this); returns how many fired."""
    total = 0
    while True:
        fired, taken = await fire_batch(services, now, batch)
        total += fired
        if taken < batch:
            return total


async def fire_batch(services: Services, now: datetime, batch: int) -> tuple[int, int]:
    """One transaction: up to ``batch`` due timers; (fired, taken).

    The batch runs without savepoints (two round trips a timer saved); when a
    firing raises, the batch rolls back and runs again with one savepoint per
    timer, so the failing one is postponed and the others still fire.
    """
    try:
        return await _fire_batch(services, now, batch, isolate=False)
    except _FiringFailed:
        return await _fire_batch(services, now, batch, isolate=True)


class _FiringFailed(Exception):
    """A firing raised in a batch run without savepoints (the batch was rolled back)."""


async def _fire_batch(
    services: Services, now: datetime, batch: int, *, isolate: bool
) -> tuple[int, int]:
    fired = 0
    async with services.db.transaction() as conn:
        timers = await store.take_due(conn, now, batch)
        if not timers:
            return 0, 0
        locked = await conn.fetch(
            "SELECT id FROM run WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE SKIP LOCKED",
            sorted({uuid.UUID(t.run_id) for t in timers}),
        )
        free = sorted(str(r["id"]) for r in locked)
        cache = _Cache(await rows.get_runs(conn, free), await store.slots_of_runs(conn, free))
        for timer in timers:
            if timer.run_id not in cache.runs:
                continue  # a use case holds the run; the next pass gets it
            if not isolate:
                try:
                    fired += await fire_one(services, conn, timer, now, cache)
                except DATABASE_ERRORS:
                    raise
                except Exception as exc:
                    raise _FiringFailed(timer.key) from exc
                continue
            try:
                async with conn.transaction():
                    fired += await fire_one(services, conn, timer, now, cache)
            except DATABASE_ERRORS:
                raise
            except Exception:
                log.exception("timer %s (%s) failed; retrying later", timer.key, timer.kind)
                await store.postpone(conn, timer.id, now + RETRY_AFTER, now)
    return fired, len(timers)


#: Errors that are about the connection, not the firing: they end the batch (the worker
#: retries it once the database is back).
DATABASE_ERRORS = (
    OSError,
    ConnectionError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
)


@dataclass
class _Cache:
    """The batch's runs and slots, loaded at once; a run is reloaded after it changes."""

    runs: dict[str, rows.RunRow]
    slots: dict[str, list[SlotView]]
    stale: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _Loaded:
    run: RunView
    definition: Definition
    slots: list[SlotView]
    slot: SlotView | None


async def _load(
    services: Services, conn: db.Connection, timer: store.TimerRow, cache: _Cache | None
) -> _Loaded | None:
    if cache is None or timer.run_id in cache.stale:
        run = await rows.get_run(conn, timer.run_id)
        slots = await sla_service.load_slots(conn, timer.run_id)
    else:
        run, slots = cache.runs.get(timer.run_id), cache.slots.get(timer.run_id, [])
    if cache is not None:
        cache.stale.add(timer.run_id)  # this firing may change it: the next one reloads
    if run is None or run.view.status != "active":
        return None
    definition = services.catalog.get(run.view.workflow, run.view.definition_version)
    slot = next((s for s in slots if s.id == timer.slot_id), None)
    if timer.slot_id is not None and (slot is None or slot.status not in LIVE):
        return None
    return _Loaded(run.view, definition, slots, slot)


async def fire_one(
    services: Services,
    conn: db.Connection,
    timer: store.TimerRow,
    now: datetime,
    cache: _Cache | None = None,
) -> int:
    """Apply one timer's effect and retire or re-arm it; 1 if it fired, 0 if it was stale."""
    loaded = await _load(services, conn, timer, cache)
    if loaded is None or (timer.kind == deadlines.TIMEOUT and not _same_visit(timer, loaded.run)):
        await store.retire(conn, timer.id, "cancelled", now)
        return 0
    count = await store.retire(conn, timer.id, "fired", now)
    late = now - timer.due_at
    base = {
        "key": timer.key,
        "due_at": timer.due_at.isoformat(),
        "late_seconds": round(late.total_seconds(), 3),
    }
    run, slot = loaded.run, loaded.slot
    if timer.kind == deadlines.BREACH:
        assert slot is not None
        await store.mark_breached(conn, slot.id, timer.ref, timer.due_at)
        entry = AuditEntry(
            "clock.breached",
            now,
            None,
            slot.id,
            f"the {timer.ref} budget of {slot.name} ran out at {timer.due_at.isoformat()}",
            {**base, "slot": slot.name, "milestone": timer.ref},
        )
        await _resync(services, conn, loaded, slot, slot, now, [entry])
        return 1
    if timer.kind == deadlines.REMINDER:
        assert slot is not None
        decl = loaded.definition.slot(slot.state, slot.name)
        rem = decl.reminders[int(timer.ref)]
        message = f"{slot.label}: {rem.describe()}"
        kind, actions, quiet = "reminder.fired", rem.actions, rem.quiet_hours
        details = {**base, "slot": slot.name, "reminder": rem.describe(), "firing": count}
    else:
        timeout = loaded.definition.state(run.state).timeouts[int(timer.ref)]
        decl = None
        message = f"{run.state}: {timeout.describe()}"
        kind, actions, quiet = "timeout.fired", timeout.actions, False
        details = {**base, "state": run.state, "timeout": timeout.describe()}
    result = firing.effects(run, slot, decl, actions, message=message, now=now)
    notified = await _notify(services, conn, run, slot, result.notices, kind, quiet, now)
    # The firing's lines go on the timeline with the change they caused: one write.
    lines = [AuditEntry(kind, now, None, slot.id if slot else None, message, details)]
    if notified:
        lines.append(
            AuditEntry(
                "notification.sent",
                now,
                None,
                slot.id if slot else None,
                None,
                {"recipients": notified, "message": message},
            )
        )
    lines += result.audit
    changed = result.slot if result.slot is not None else slot
    if changed is not None:
        assert slot is not None
        changed = deadlines.sync_clocks(loaded.definition, changed, run.subject, now)
        await _resync(services, conn, loaded, slot, changed, now, [] if result.move_to else lines)
    if result.move_to is not None:
        await _move(services, conn, loaded, changed, result.move_to, message, now, lines)
    elif changed is None:
        await rows.append_audit(conn, run.id, lines)
    return 1


def _same_visit(timer: store.TimerRow, run: RunView) -> bool:
    return timer.key.startswith(f"{run.id}:{run.visit}:")


async def _resync(
    services: Services,
    conn: db.Connection,
    loaded: _Loaded,
    before: SlotView,
    after: SlotView,
    now: datetime,
    audit: list[AuditEntry] | None = None,
) -> None:
    """Write the slot (if it changed), the lines, and re-arm its timers (the firing counted)."""
    result = Outcome(loaded.run, (), (after,), tuple(audit or ()), run_changed=False)
    ctx = sla_service.context(loaded.definition, services.calendars, [before])
    if after != before:
        await persist.outcome(conn, result, workflow=loaded.definition.name, now=now, sla=ctx)
        return
    if audit:
        await rows.append_audit(conn, loaded.run.id, audit)
    await sla_service.after_outcome(conn, result, ctx, now)


async def _move(
    services: Services,
    conn: db.Connection,
    loaded: _Loaded,
    changed: SlotView | None,
    target: str,
    reason: str,
    now: datetime,
    lines: list[AuditEntry],
) -> None:
    slots = [changed if changed is not None and s.id == changed.id else s for s in loaded.slots]
    result = engine.goto(
        loaded.definition,
        loaded.run,
        slots,
        target=target,
        reason=reason,
        now=now,
        actor=None,
        new_id=persist.new_id,
    )
    result = Outcome(
        result.run, result.created, result.changed, (*lines, *result.audit), result.run_changed
    )
    await persist.outcome(
        conn,
        result,
        workflow=loaded.definition.name,
        now=now,
        sla=sla_service.context(loaded.definition, services.calendars, slots),
    )


async def _notify(
    services: Services,
    conn: db.Connection,
    run: RunView,
    slot: SlotView | None,
    notices: list[firing.Notice],
    kind: str,
    quiet_hours: bool,
    now: datetime,
) -> list[str]:
    """Write one notification per recipient (see ``service.notices``); returns the recipients."""
    written = await notice_rows.outbox_rows(
        services, conn, run, slot, notices, kind, quiet_hours, now
    )
    await outbox.notify(conn, written)
    return [n.recipient for n in written]
