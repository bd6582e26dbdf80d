"""Applying a declared run migration (``taskflow runs migrate WORKFLOW --to VERSION --apply``).

Runs are taken in batches, each batch one transaction: the batch's run rows are
locked first in id order (the lock order: runs, then their slots, clocks and
timers, which the writers below take), then each run is migrated by its step:

- ``stay``: the run is put on the new version; slots, holders and clock ledgers
  are kept, under the state and slot names the step gives, but for the clocks
  it restarts; slots the state adds open; timers are planned again by the new
  version's rules (``service/versions/stays.py``).
- ``to(state)``: under the old version, the run's live (and held) slots are
  cancelled with the reason "migrated to version N" (their clocks stop, their
  timers are retired); the run is put on the new version and ``state`` is
  entered as on a move (enter hook, slots opened with new clocks).
- ``cancel(reason)``: the run is cancelled under its old version.

Each run's timeline gets ``run.migrated`` (from/to version and state, the step).
A run is selected only while it is still live at a (version, state) the
migration names, so an interrupted apply is resumed by running it again, and a
second apply changes nothing. The old version need not be loaded (start-up lets
it go when this migration covers its runs): the target then stands in for it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.definition import migrations
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine, pausing, states
from taskflow.core.runs.decision import Decision
from taskflow.core.runs.model import AuditEntry
from taskflow.service.access import access
from taskflow.service.clocks import deadlines
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import ids, persist
from taskflow.service.versions import stays
from taskflow.store.common import db
from taskflow.store.runs import runs as rows
from taskflow.store.versions import deployments as store

#: Who the timeline names for a migration.
ACTOR = "migration"


@dataclass(frozen=True)
class Applied:
    """How many runs each step kind migrated, and in how many batches."""

    by_kind: dict[str, int]
    batches: int


def _old(services: Services, workflow: str, version: int, target: Definition) -> Definition:
    """The version runs leave; when the code no longer has it (start-up let it go because this
    migration is declared), the target stands in: closing slots and cancelling need no rule of
    the old version beyond its calendar, and a stay reads only the target."""
    try:
        return services.catalog.get(workflow, version)
    except errors.NotFound:
        return target


def _steps(target: Definition) -> dict[tuple[int, str], migrations.Step]:
    return {(m.from_version, state): step for m in target.migrations for state, step in m.steps}


@retry.retried("migrate the runs")
async def apply_as(
    services: Services, actor: Principal, workflow: str, to_version: int, *, batch: int = 100
) -> Applied:
    """:func:`apply` for a principal (the ``migrateRuns`` mutation): admins only."""
    access.require_admin(actor, "migrate runs between workflow versions")
    return await apply(services, workflow, to_version, batch=batch)


async def apply(services: Services, workflow: str, to_version: int, *, batch: int = 100) -> Applied:
    """Migrate every live run of ``workflow`` that a step of ``to_version`` names."""
    if batch < 1:
        raise errors.ValidationError("--batch must be at least 1.", field="batch")
    target = services.catalog.get(workflow, to_version)
    steps = _steps(target)
    if not steps:
        raise errors.ValidationError(
            f"Version {to_version} of {workflow!r} declares no migrations: add "
            "migrations = [migration.from_version(...)] to it (docs/versions.md)."
        )
    pairs = sorted(steps)
    done: dict[str, int] = {}
    batches = 0
    while True:
        now = services.clock.now()
        async with services.db.transaction() as conn:
            ids = await store.lock_batch(conn, workflow, pairs, batch)
            for run_id in ids:
                kind = await _migrate(services, conn, run_id, target, steps, now)
                done[kind] = done.get(kind, 0) + 1
        if not ids:
            return Applied(done, batches)
        batches += 1


async def _migrate(
    services: Services,
    conn: db.Connection,
    run_id: str,
    target: Definition,
    steps: dict[tuple[int, str], migrations.Step],
    now: datetime,
) -> str:
    found = await rows.get_run(conn, run_id)
    assert found is not None
    run = found.view
    step = steps[(run.definition_version, run.state)]
    old = _old(services, run.workflow, run.definition_version, target)
    slots = await deadlines.load_slots(conn, run_id)
    to_state = step.state_after(run.state) if step.kind != migrations.TO else step.target
    details: dict[str, object] = {
        "from_version": run.definition_version,
        "to_version": target.version if step.kind != migrations.CANCEL else None,
        "from_state": run.state,
        "to_state": to_state,
        "step": step.kind,
    }
    if step.slots:
        details["slots"] = dict(step.slots)
    if step.restart:
        details["restart_clocks"] = list(step.restart)
    line = AuditEntry(
        "run.migrated",
        now,
        ACTOR,
        None,
        f"migrated to version {target.version} ({step.describe()})",
        details,
    )
    if step.kind == migrations.CANCEL:
        await persist.audit(conn, run_id, line)
        result = engine.cancel(
            old,
            run,
            slots,
            reason=f"migration: {step.reason}",
            now=now,
            actor=ACTOR,
            new_id=ids.new_id,
        )
        await persist.outcome(
            conn, result, now=now, sla=deadlines.sla_of(services, old, slots, ACTOR)
        )
        return step.kind
    if step.kind == migrations.TO:
        # Close what the old version opened, by the old version's rules.
        closing = Decision(old, run, slots, now=now, actor=ACTOR, new_id=ids.new_id)
        reason = f"migrated to version {target.version}"
        held = pausing.held(closing)
        closing.cancel_live(reason=reason)
        closing.cancel_slots(held, reason=reason)
        closing.log("run.migrated", reason=line.reason, **line.details)
        await persist.outcome(
            conn, closing.outcome(), now=now, sla=deadlines.sla_of(services, old, slots, ACTOR)
        )
    else:
        await persist.audit(conn, run_id, line)
    await store.set_version(conn, run_id, target.version, target.digest, now)
    if step.kind == migrations.TO:
        assert step.target is not None
        slots = await deadlines.load_slots(conn, run_id)
        moved = dataclasses.replace(run, definition_version=target.version)
        entering = Decision(target, moved, slots, now=now, actor=ACTOR, new_id=ids.new_id)
        states.enter(entering, step.target, reason=line.reason or "", via="migration")
        states.settle(entering)
        await persist.outcome(
            conn, entering.outcome(), now=now, sla=deadlines.sla_of(services, target, slots, ACTOR)
        )
    else:
        await stays.keep(services, conn, run, slots, step, target, now, ACTOR)
    return step.kind
