"""Opening runs: the insert every start shares (``startRun``, automatic starts of owned
subjects, child runs: docs/composition.md), one run (:func:`open_run`) or many set-based
(:func:`open_runs`). The caller holds the subjects (their upsert locked the rows) and has
checked that no live run of the workflow exists on them (``starting.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.common import unit_of_work as uow
from taskflow.core.definition import actors
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine, refusals, scheduling
from taskflow.core.runs.model import Outcome, RunView
from taskflow.service.clocks import deadlines
from taskflow.service.common.container import Services
from taskflow.service.runs import buffered, ids, persist
from taskflow.service.workspaces import limits as workspace_limits
from taskflow.store.common import db
from taskflow.store.common import unit_of_work as writer
from taskflow.store.runs import runs as rows
from taskflow.store.runs import subjects


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
    over = await workspace_limits.admit_runs(conn, [o.subject.id for o in openings])
    if over is not None:  # the workspace's run limit, checked first as for one start
        raise Refused(openings[over[0]].index, over[1])
    return await write_opened(services, conn, [decide(o, now) for o in openings], now)


@dataclass(frozen=True)
class Decided:
    opening: Opening
    result: Outcome
    correlation_key: str | None


def decide(opening: Opening, now: datetime) -> Decided:
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
    return Decided(opening, result, key)


async def write_opened(
    services: Services, conn: db.Connection, decided: Sequence[Decided], now: datetime
) -> list[RunView]:
    """Write decided starts: the runs (one statement, each already as its start leaves it),
    then their writes as one unit of work, then buffered events (a fresh run keeps none:
    only a run ended at its start delivers, dropping nothing)."""
    contexts: dict[tuple[str, int, str | None], uow.Context] = {}
    planned, keys = [], []
    for d in decided:
        definition, by = d.opening.definition, d.opening.starter.started_by
        key = (definition.name, definition.version, by)
        keys.append(key)
        if key not in contexts:
            contexts[key] = deadlines.sla_of(services, definition, actor=by)
        # The clocks of slots whose chain asks the team start on the team's calendar (the
        # engine reads no teams), as ``persist.write`` does for every other outcome.
        result = await deadlines.opened_on_team(conn, contexts[key], _as_update(d.result), now)
        # A fresh run has no timer rows yet: nothing to load.
        planned.append(uow.plan(result, contexts[key], (), now))
    merged = uow.merged(planned)
    # The runs are inserted as the start leaves them, their versions counting its
    # decisions: no second statement rewrites the rows just written (a fresh run's row
    # would otherwise be written twice: an insert, then the start's update).
    bumps = {view.id: n for view, n in merged.runs}
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
                version=1 + bumps.get(d.result.run.id, 0),
            )
            for d in decided
        ],
        now,
    )
    # Fresh runs left no state: no step or child rows of theirs to drop (``quiet``).
    fresh = [d.result.run.id for d in decided]
    await writer.write(conn, dataclasses.replace(merged, runs=()), now, quiet=fresh)
    for d in decided:  # a request's start over its workspace's open-slot limit is refused
        await workspace_limits.admit_opened(conn, d.result.run.id, d.result.created)
    for d, key in zip(decided, keys, strict=True):
        if buffered.needs_delivery(d.opening.definition, d.result):
            await buffered.deliver(conn, contexts[key], d.result.run.id, now, persist.write)
    return [d.result.run for d in decided]


def _as_update(result: Outcome) -> Outcome:
    """A fresh run's outcome as a change of its run (its state's steps, children and
    timers follow from it); its row is inserted as it stands, not updated."""
    return dataclasses.replace(result, run_changed=True)
