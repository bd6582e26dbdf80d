"""Subjects owned by a workflow: ``upsertSubject`` and the automatic start it makes.

A workflow declaring ``owns`` (``core/definition/owning.py``) starts a run on each subject
of its type the first time the subject is sent: one transaction upserts the subject (its
row lock, as ``startRun`` takes it), re-checks the live runs when the attributes changed,
and opens the owner's run when the subject has none of it yet (live or ended). Two
racing upserts of one new subject make one run: the second waits on the subject's row,
then finds the first's run; should a start of the owner race it, the live-run index
refuses the second run and the upsert is decided again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import asyncpg

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.common import refusals
from taskflow.service.access import access
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import runs, starting
from taskflow.store.runs import runs as rows
from taskflow.store.runs import subjects


@dataclass(frozen=True)
class Upserted:
    """What an upsert did: the subject as stored, its live runs (ids), the owner's run when
    it started one (``started``), and the owner's latest run, live or ended (``owned``)."""

    subject: subjects.SubjectRow
    runs: list[str]
    started: rows.RunRow | None
    owned: rows.RunRow | None


@retry.retried("upsert the subject")
async def upsert_subject(
    services: Services,
    actor: Principal,
    *,
    subject_type: str,
    external_id: str,
    attributes: Mapping[str, Any],
) -> Upserted:
    """Create or replace a subject; a new subject of an owned type starts its owner's run."""
    owner = services.catalog.owners.get(subject_type)
    if owner is not None:
        access.require_start(actor, owner.name, "upsert subjects (and start runs)")
    else:
        runs.require_subject_grant(services, actor, subject_type)
    if not external_id:
        raise errors.ValidationError("externalId must not be empty.", field="externalId")
    runs.check_subject(services, subject_type, attributes)
    for attempt in range(2):
        try:
            return await _upsert(services, actor, (subject_type, external_id, attributes))
        except asyncpg.UniqueViolationError:
            if attempt:
                raise
            # A startRun of the owner on this subject committed first: decide again.
    raise AssertionError("unreachable")


async def _upsert(
    services: Services, actor: Principal, sent: tuple[str, str, Mapping[str, Any]]
) -> Upserted:
    subject_type, external_id, attributes = sent
    owner = services.catalog.owners.get(subject_type)
    async with services.db.transaction() as conn:
        now = services.clock.now()
        run_ids: list[str] = []
        subject = None
        while subject is None:
            subject = await subjects.insert_new(conn, subject_type, external_id, attributes, now)
            if subject is not None:
                break
            # It exists (perhaps a racing upsert committed it): lock it, then its live runs.
            before = await subjects.find(conn, subject_type, external_id, lock=True)
            if before is None:
                continue  # pruned by retention in between: insert it again
            if before.gone_at is not None:  # deleted (deleteSubject): it stays deleted
                raise refusals.SubjectGone(f"The {subject_type} {external_id!r} was deleted.")
            run_ids = await rows.live_runs_of_subject(conn, before.id)
            now = services.clock.now()  # read once the subject and its runs are held
            subject = before
            if before.attributes != dict(attributes):
                subject = await subjects.update(conn, before.id, attributes, now)
                await runs.resubject(
                    services, conn, actor, run_ids, attributes, now, before.attributes
                )
        started = owned = None
        if owner is not None and owner.owns is not None:
            owned = await rows.latest_run_for(conn, owner.name, subject.id)
            if owned is None and owner.owns.start:
                owned = started = await starting.open_run(
                    services,
                    conn,
                    starting.Starter.of(actor),
                    owner,
                    subject,
                    idempotency_key=None,
                    now=now,
                )
                run_ids = [*run_ids, started.view.id]
    return Upserted(subject, run_ids, started, owned)
