"""``deleteSubject``: the tracked entity is gone, and so is everything waiting on it.

One transaction, in the lock order (docs/architecture.md): the subject's row, then each
live run in id order (with its live slots, clocks and timers, as every decision); each run
goes where its definition says (``subject_gone``, a terminal state) or is cancelled with the
reason ``subject-gone`` (:func:`ended`), which cancels its slots and, through the
planner, its timers; then the runs' unused magic links are revoked and the subject is
marked gone (``subject.gone_at``): it takes no new run and no update, and the engine refuses
any later action on its runs (``SubjectGone``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine
from taskflow.core.runs.model import AuditEntry, Outcome, RunView, SlotView
from taskflow.core.runs.statuses import RunStatus
from taskflow.service.access import access
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import ids
from taskflow.service.runs import runs as run_service
from taskflow.store.links import links as link_rows
from taskflow.store.runs import runs as rows
from taskflow.store.runs import subjects


@dataclass(frozen=True)
class Deleted:
    """What ``deleteSubject`` did: the subject as stored, and the runs it ended."""

    subject: subjects.SubjectRow
    run_ids: list[str]
    links_revoked: int


#: The reason a run ends when its subject is deleted.
SUBJECT_GONE = "subject-gone"


def ended(
    definition: Definition, run: RunView, slots: list[SlotView], now: datetime, actor: str
) -> Outcome:
    """The run of a deleted subject: sent to the definition's ``subject_gone`` state, else (or
    when it has not started: a delayed start) cancelled with the reason ``subject-gone``,
    after a ``subject.gone`` line; from now on the engine refuses it (``SubjectGone``)."""
    if definition.subject_gone is not None and run.status == RunStatus.ACTIVE:
        result = engine.goto(
            definition, run, slots, target=definition.subject_gone, reason=SUBJECT_GONE,
            now=now, actor=actor, new_id=ids.new_id, via=SUBJECT_GONE,
        )  # fmt: skip
    else:
        result = engine.cancel(
            definition, run, slots, reason=SUBJECT_GONE, now=now, actor=actor, new_id=ids.new_id
        )
    line = AuditEntry("subject.gone", now, actor, None, SUBJECT_GONE, {"state": run.state})
    return dataclasses.replace(
        result,
        run=dataclasses.replace(result.run, subject_gone=True),
        audit=(line, *result.audit),
    )


@retry.retried("delete the subject")
async def delete_subject(
    services: Services, actor: Principal, *, subject_type: str, external_id: str
) -> Deleted:
    """Delete the subject: end its live runs (see the module doc). Who may: applications
    granted a workflow tracking its type, and admins; and only when they may cancel each of
    its live runs (``cancelRun``'s rule: an integration acts on the runs it started).
    Deleting a subject already gone changes nothing and answers the same."""
    tracking = [d.name for d in services.catalog.latest() if d.tracks == subject_type]
    if not any(access.may_start(actor, name) for name in tracking):
        raise errors.Forbidden(
            f"Only applications granted a workflow tracking {subject_type!r}, and admins, may "
            "delete its subjects; ask an admin for a grant (see docs/access.md)."
        )
    async with services.db.transaction() as conn:
        subject = await subjects.find(conn, subject_type, external_id, lock=True)
        if subject is None:
            raise errors.NotFound(f"No {subject_type} {external_id!r} is tracked.")
        if subject.gone_at is not None:
            return Deleted(subject, [], 0)
        # Locked, in id order; a delayed start is ended too (it would start for nothing).
        run_ids = await rows.live_runs_of_subject(conn, subject.id, scheduled=True)
        now = services.clock.now()

        def gone(
            definition: Definition, run: rows.RunRow, slots: list[SlotView], now: datetime
        ) -> Outcome:
            access.require_cancel(actor, run.view.workflow, slots, run.started_by)
            return ended(definition, run.view, slots, now, actor.id)

        for run_id in run_ids:
            await run_service.decide(services, conn, run_id, gone, now=now)
        revoked = await link_rows.revoke_of_runs(conn, run_ids, actor.id, now)
        await subjects.mark_gone(conn, subject.id, now)
        found = await subjects.find(conn, subject_type, external_id)
    assert found is not None
    return Deleted(found, run_ids, revoked)
