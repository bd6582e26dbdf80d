"""Starting a run: ``startRun``'s use case, :func:`begin` (a start in the caller's
transaction: ``startRun``'s once checked, a worker starting a child run) and
:func:`open_run`, the insert every start shares (``startRun``, automatic starts of owned
subjects, child runs: docs/composition.md).

The caller of :func:`open_run` holds the subject (its upsert locked the row) and has checked
that no live run of the workflow exists; it inserts the run, decides its start and persists
it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.common import unit_of_work as uow
from taskflow.core.definition import actors
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.workflow import Definition
from taskflow.core.delivery import recipients
from taskflow.core.runs import engine, refusals, scheduling
from taskflow.core.runs.model import Outcome, RunView
from taskflow.service.access import access
from taskflow.service.clocks import deadlines
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import buffered, ids, persist
from taskflow.store.common import db
from taskflow.store.common import unit_of_work as writer
from taskflow.store.runs import runs as rows
from taskflow.store.runs import subjects


@dataclass(frozen=True)
class Started:
    run: rows.RunRow
    created: bool


@dataclass(frozen=True)
class Starter:
    """Who starts a run: ``acting`` is what its start's hooks and routes read as
    ``ctx.actor``; ``started_by`` the principal recorded as the run's ``startedBy``."""

    acting: actors.Actor
    started_by: str

    @classmethod
    def of(cls, principal: Principal) -> Starter:
        """A principal starting a run itself."""
        return cls(actors.principal(principal), principal.id)


#: The longest correlation key a run keeps (``run.correlation_key``).
MAX_CORRELATION = 200


def correlation(definition: Definition, subject: Mapping[str, Any]) -> str | None:
    """The run's correlation key: the definition's ``correlate_by`` read from the subject.
    A value longer than :data:`MAX_CORRELATION` is refused (``ValidationError``): raised in
    the start's transaction, it leaves nothing written."""
    if definition.correlate_by is None:
        return None
    value = ex.value_of(definition.correlate_by, ex.Env(subject=subject))
    if value is ex.MISSING or value is None:
        return None
    key = str(value)
    if len(key) > MAX_CORRELATION:
        raise errors.ValidationError(
            f"{definition.name!r} correlates its runs by {definition.correlate_by}, which is "
            f"{len(key)} characters long on this subject; at most {MAX_CORRELATION} are "
            "accepted: shorten it.",
            field="subject.attributes",
        )
    return key


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


#: What a start may be refused with (a caller starting many reads each as a refusal).
Refusable = refusals.Refusal | errors.ValidationError | errors.NotFound
REFUSABLE = (refusals.Refusal, errors.ValidationError, errors.NotFound)


class Refused(Exception):
    """The start at ``index`` of a :func:`begin_many` cannot be made (``error``: the typed
    refusal one :func:`begin` would raise). Raised before any run is written; the subjects
    upserted meanwhile are the caller's to roll back (a savepoint)."""

    def __init__(self, index: int, error: Refusable) -> None:
        super().__init__(index, error)
        self.index = index
        self.error = error


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
        held = {i: s for i, s in zip(wave, found, strict=True) if s is not None}
        live = await rows.live_runs_for_many(
            conn, [(starts[i].definition.name, s.id) for i, s in held.items()]
        )
        refusal: dict[int, Refusable] = {}
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
                    _decide(Opening(start.definition, start.starter, subject, index=i), now)
                )
            except Refused as refused:
                refusal[i] = refused.error
            except refusals.Refusal as error:
                refusal[i] = error
        if refusal:
            first = min(refusal)
            raise Refused(first, refusal[first])
        views = await _opened(services, conn, decided, now)
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


@dataclass(frozen=True)
class Opening:
    """A run to open on a subject the caller holds (:func:`open_runs`)."""

    definition: Definition
    starter: Starter
    subject: subjects.SubjectRow
    idempotency_key: str | None = None
    start_at: datetime | None = None
    #: Where it stands in the caller's list (a :class:`Refused` names it).
    index: int = 0


async def open_run(
    services: Services,
    conn: db.Connection,
    starter: Starter,
    definition: Definition,
    subject: subjects.SubjectRow,
    *,
    idempotency_key: str | None,
    now: datetime,
    start_at: datetime | None = None,
) -> rows.RunRow:
    """Insert a run of ``definition`` on ``subject``, started by ``starter`` at ``now``, and
    persist its start (slots, clocks, timers, timeline); answers the run as written. With
    ``start_at`` later than ``now`` the run is scheduled instead (``core/runs/scheduling.py``):
    the worker starts it then. Many at once, without reading them back: :func:`open_runs`."""
    opening = Opening(definition, starter, subject, idempotency_key, start_at)
    try:
        (view,) = await open_runs(services, conn, [opening], now)
    except Refused as refused:
        raise refused.error from None
    run = await rows.get_run(conn, view.id)
    assert run is not None
    return run


async def open_runs(
    services: Services, conn: db.Connection, openings: Sequence[Opening], now: datetime
) -> list[RunView]:
    """Open runs (:func:`open_run` for each) set-based: the runs in one statement, their
    starts' writes (slots, clocks, timers, timeline, step and child rows) as one merged unit of
    work; answers the runs' views as decided, in order. :class:`Refused` (nothing written)
    for the first start the engine or its correlation key refuses."""
    return await _opened(services, conn, [_decide(o, now) for o in openings], now)


@dataclass(frozen=True)
class _Decided:
    opening: Opening
    result: Outcome
    correlation_key: str | None


def _decide(opening: Opening, now: datetime) -> _Decided:
    """The start of one run, decided (pure): the engine's outcome and its correlation key."""
    definition, subject, actor = opening.definition, opening.subject, opening.starter.acting
    run_id = ids.new_id()
    try:
        key = correlation(definition, subject.attributes)
        if opening.start_at is not None and opening.start_at > now:
            result = scheduling.scheduled(
                definition,
                run_id=run_id,
                subject=subject.attributes,
                start_at=opening.start_at,
                now=now,
                actor=actor,
            )
        else:
            result = engine.start(
                definition,
                run_id=run_id,
                subject=subject.attributes,
                now=now,
                actor=actor,
                new_id=ids.new_id,
            )
    except REFUSABLE as error:
        raise Refused(opening.index, error) from error
    return _Decided(opening, result, key)


async def _opened(
    services: Services, conn: db.Connection, decided: Sequence[_Decided], now: datetime
) -> list[RunView]:
    """Write decided starts: the runs (one statement), then their writes as one unit of
    work, then buffered events (a fresh run keeps none: only a run ended at its start
    delivers, dropping nothing)."""
    await rows.insert_runs(
        conn,
        [
            rows.NewRun(
                d.result.run,
                subject_id=d.opening.subject.id,
                digest=d.opening.definition.digest,
                correlation_key=d.correlation_key,
                idempotency_key=d.opening.idempotency_key,
                started_by=d.opening.starter.started_by,
            )
            for d in decided
        ],
        now,
    )
    contexts: dict[tuple[str, int, str | None], uow.Context] = {}
    planned, keys = [], []
    for d in decided:
        definition, by = d.opening.definition, d.opening.starter.started_by
        key = (definition.name, definition.version, by)
        keys.append(key)
        if key not in contexts:
            contexts[key] = deadlines.sla_of(services, definition, actor=by)
        # A fresh run has no timer rows yet: nothing to load.
        planned.append(uow.plan(_as_update(d.result), contexts[key], (), now))
    # Fresh runs left no state: no step or child rows of theirs to drop (``quiet``).
    fresh = [d.result.run.id for d in decided]
    await writer.write(conn, uow.merged(planned), now, quiet=fresh)
    for d, key in zip(decided, keys, strict=True):
        if buffered.needs_delivery(d.opening.definition, d.result):
            await buffered.deliver(conn, contexts[key], d.result.run.id, now, persist.write)
    return [d.result.run for d in decided]


def _as_update(result: Outcome) -> Outcome:
    """A fresh run's outcome, minus the run row the caller inserted itself."""
    return dataclasses.replace(result, run_changed=True)
