"""Undo a run's latest state change (a redo when that change was an undo).

One transaction: the run is locked first, then its live slots (the lock order), the
timeline read under that lock, and :func:`taskflow.core.history.rewind.undo` decides with
the instant taken once; a refusal is recorded on the run's timeline (docs/history.md, "Undo").
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.definition.workflow import Definition
from taskflow.core.history import rewind
from taskflow.core.history import undo as rule
from taskflow.core.runs.model import Outcome, SlotView
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import ids
from taskflow.service.runs import runs as run_service
from taskflow.store.history import spans
from taskflow.store.runs import runs as rows

#: What :func:`taskflow.core.history.undo.target` refuses with.
REFUSED = (rule.NotUndoable, rule.NoHistory, rule.UndoWindowExpired, rule.NotSameActor)


@retry.retried("undo the change")
async def undo(
    services: Services,
    actor: Principal,
    *,
    run_id: str,
    reason: str,
    expected_version: int | None = None,
) -> rows.RunRow:
    """Rewind the run to the state it stood in before its latest state change."""
    if not reason.strip():
        raise errors.ValidationError(
            "Say why (reason): it goes on the run's timeline with your id.", field="reason"
        )
    async with services.db.connection() as conn:
        await run_service.readable_run(services, conn, actor, run_id)

    async def work() -> rows.RunRow:
        async with services.db.transaction() as conn:
            locked = await rows.get_run(conn, run_id, lock=True)  # the run first
            if locked is None:
                raise errors.NotFound(f"No run has the id {run_id!r}.")
            lines = await spans.undo_lines(conn, run_id)

            def decide(
                definition: Definition, run: rows.RunRow, slots: list[SlotView], now: datetime
            ) -> Outcome:
                return rewind.undo(
                    definition,
                    run.view,
                    slots,
                    lines=lines,
                    reason=reason.strip(),
                    actor=actor.id,
                    principal=actor,
                    now=now,
                    new_id=ids.new_id,
                )

            await run_service.decide(
                services, conn, run_id, run_service.guarded(expected_version, decide)
            )
            run = await rows.get_run(conn, run_id)
        assert run is not None
        return run

    return await run_service.refusals_recorded(services, run_id, actor.id, "undo", work)


async def undo_targets(
    services: Services, actor: Principal, run_ids: Sequence[str]
) -> dict[str, rule.Target | None]:
    """What an undo by ``actor`` would do now to each run (None: its latest change may not
    be undone), for a page of runs in two statements (the runs, their lines)."""
    async with services.db.connection() as conn:
        runs = await rows.get_runs(conn, run_ids)
        lines = await spans.undo_lines_of_runs(conn, list(runs))
    now = services.clock.now()
    found: dict[str, rule.Target | None] = dict.fromkeys(run_ids)
    for run_id, run in runs.items():
        if run.view.status != "active":
            continue
        with contextlib.suppress(*REFUSED):  # not undoable by this caller now: None
            found[run_id] = rule.target(
                run_service.definition_for(services, run.view),
                lines[run_id],
                actor=actor.id,
                principal=actor,
                subject=dict(run.view.subject),
                now=now,
            )
    return found


async def undo_target(services: Services, actor: Principal, run_id: str) -> rule.Target | None:
    """What an undo by ``actor`` would do now (None: the latest change may not be undone)."""
    return (await undo_targets(services, actor, [run_id]))[run_id]
