"""Starting a run: ``startRun``'s use case, :func:`begin` (a start in the caller's
transaction, ``startRun``'s once checked) and :func:`begin_many` (many at once, set-based: a
worker starting the children of parents). Both check the subject and its live runs, then
open the runs through ``opening.py`` (:func:`open_run`, :func:`opening.open_runs`), the insert
every start shares (``startRun``, automatic starts of owned subjects, child runs:
docs/composition.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.definition.workflow import Definition
from taskflow.core.delivery import recipients
from taskflow.core.runs import refusals, scheduling
from taskflow.core.runs.model import RunView
from taskflow.service.access import access
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import opening
from taskflow.service.runs.opening import REFUSABLE as REFUSABLE
from taskflow.service.runs.opening import Refused as Refused
from taskflow.service.runs.opening import Starter as Starter
from taskflow.service.runs.opening import open_run as open_run
from taskflow.service.workspaces import limits as workspace_limits
from taskflow.store.common import db
from taskflow.store.runs import runs as rows
from taskflow.store.runs import subjects


@dataclass(frozen=True)
class Started:
    run: rows.RunRow
    created: bool


@retry.retried("start a run")
async def start_run(
    services: Services,
    actor: Principal,
    *,
    workflow: str,
    subject_type: str,
    external_id: str,
    attributes: Mapping[str, Any],
    idempotency_key: str | None,
    version: int | None = None,
    delay: scheduling.Delay | None = None,
) -> Started:
    """Start a run for a subject (on ``version``, default the latest); the same idempotency
    key returns the live run again. ``delay`` (an instant or a duration) schedules it."""
    definition = services.catalog.get(workflow, version)
    access.require_start(actor, definition.name)
    if subject_type != definition.tracks:
        raise errors.ValidationError(
            f"Workflow {workflow!r} tracks subjects of type {definition.tracks!r}, not "
            f"{subject_type!r}.",
            field="subject.type",
        )
    if not external_id:
        raise errors.ValidationError(
            "subject.externalId must not be empty.", field="subject.externalId"
        )
    recipients.check_subject(definition, attributes, "subject.attributes")
    start_at = None
    if delay is not None:
        start_at = scheduling.start_instant(
            definition, services.calendars, services.clock.now(), at=delay.at, after=delay.after
        )
    for attempt in range(2):
        try:
            now = services.clock.now()
            async with services.db.transaction() as conn:
                return await begin(
                    services,
                    conn,
                    definition,
                    Starter.of(actor),
                    (subject_type, external_id, attributes),
                    idempotency_key,
                    now,
                    start_at=start_at,
                )
        except asyncpg.UniqueViolationError:
            if attempt:
                raise
            # A concurrent start of the same subject won; the second pass finds its run.
    raise AssertionError("unreachable")


async def begin(
    services: Services,
    conn: db.Connection,
    definition: Definition,
    starter: Starter,
    sent: tuple[str, str, Mapping[str, Any]],
    idempotency_key: str | None,
    now: datetime,
    *,
    start_at: datetime | None = None,
) -> Started:
    """Start a run in the caller's transaction (``start_run``'s work once checked) on the
    subject ``sent`` (type, external id, attributes). ``RunExists`` when the subject has a
    live run of the workflow. Many runs at once, with no key: :func:`begin_many`."""
    subject_type, external_id, attributes = sent
    subject, _ = await subjects.upsert(conn, subject_type, external_id, attributes, now)
    if idempotency_key is not None:
        # A retried start gets its run back, even if the run has ended since.
        earlier = await rows.run_by_idempotency_key(
            conn, definition.name, subject.id, idempotency_key
        )
        if earlier is not None:
            return Started(earlier, created=False)
    existing = await rows.live_run_for(conn, definition.name, subject.id)
    if existing is not None:
        raise _exists(definition, sent, existing.view.id, existing.view.state)
    run = await open_run(
        services,
        conn,
        starter,
        definition,
        subject,
        idempotency_key=idempotency_key,
        now=now,
        start_at=start_at,
    )
    return Started(run, created=True)


def _exists(
    definition: Definition, sent: tuple[str, str, Mapping[str, Any]], run_id: str, state: str
) -> refusals.RunExists:
    subject_type, external_id, _ = sent
    return refusals.RunExists(
        f"{subject_type} {external_id!r} already has a live {definition.name!r} run "
        f"({run_id}, in state {state}); a second start needs the first start's "
        "idempotencyKey, or cancel the live run first.",
        run_id=run_id,
    )


@dataclass(frozen=True)
class Begin:
    """One start of :func:`begin_many`: a run of ``definition`` on the subject ``sent``."""

    definition: Definition
    starter: Starter
    sent: tuple[str, str, Mapping[str, Any]]


async def begin_many(
    services: Services, conn: db.Connection, starts: Sequence[Begin], now: datetime
) -> list[RunView]:
    """Start runs in the caller's transaction, each as :func:`begin` starts one with no
    idempotency key and at once, set-based: one statement per table for all of them (their
    subjects, the live-run check, the runs, then one unit of work), no read-back. A worker
    starting a parent's children calls it under the parent's lock.

    Starts naming the same subject again go in a later wave, after the earlier starts are
    written, so each sees the one before it as ``begin`` in a loop would (a second run of
    a workflow on one subject is ``RunExists``). The first start that cannot be made raises
    :class:`Refused` before any run is written."""
    opened: dict[int, RunView] = {}
    for wave in _waves(starts):
        found = await subjects.upsert_many(conn, [starts[i].sent for i in wave], now)
        held = {i: s[0] for i, s in zip(wave, found, strict=True) if s is not None}
        live = await rows.live_runs_for_many(
            conn, [(starts[i].definition.name, s.id) for i, s in held.items()]
        )
        refusal: dict[int, opening.Refusable] = {}
        decided = []
        for i in wave:
            start, subject = starts[i], held.get(i)
            existing = None if subject is None else live.get((start.definition.name, subject.id))
            try:
                if subject is None:
                    raise refusals.SubjectGone(
                        f"The {start.sent[0]} {start.sent[1]!r} was deleted (deleteSubject); "
                        "no run starts for it."
                    )
                if existing is not None:
                    raise _exists(start.definition, start.sent, *existing)
                decided.append(
                    opening.decide(
                        opening.Opening(start.definition, start.starter, subject, index=i), now
                    )
                )
            except opening.Refused as refused:
                refusal[i] = refused.error
            except refusals.Refusal as error:
                refusal[i] = error
        over = await workspace_limits.admit_runs(conn, [d.opening.subject.id for d in decided])
        if over is not None:  # the runs before it fit the workspace's run limit
            refusal[decided[over[0]].opening.index] = over[1]
        if refusal:
            first = min(refusal)
            raise opening.Refused(first, refusal[first])
        views = await opening.write_opened(services, conn, decided, now)
        opened.update(zip((d.opening.index for d in decided), views, strict=True))
    return [opened[i] for i in range(len(starts))]


def _waves(starts: Sequence[Begin]) -> list[list[int]]:
    """The starts' indexes in waves, each naming a subject at most once, in order."""
    waves: list[list[int]] = []
    seen: list[set[tuple[str, str]]] = []
    for i, start in enumerate(starts):
        key = (start.sent[0], start.sent[1])
        level = next((n for n, keys in enumerate(seen) if key not in keys), len(waves))
        if level == len(waves):
            waves.append([])
            seen.append(set())
        waves[level].append(i)
        seen[level].add(key)
    return waves
