"""Read use cases: inbox, work, board, run, timeline, one slot the actor may see."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from taskflow import errors
from taskflow.core.access import access as access_rules
from taskflow.core.access.principals import Principal
from taskflow.core.definition import audience as au
from taskflow.core.definition import runtime
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.runs.model import SlotView
from taskflow.core.runs.statuses import ChildStatus, RunStatus, SlotStatus
from taskflow.core.slots import filters
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.service.runs import runs as run_service
from taskflow.store.compose import children as child_rows
from taskflow.store.runs import runs as rows
from taskflow.store.slots import queries

MAX_FIRST = 100
Cursor = tuple[datetime | None, int, str]
#: A slot with its run's state and subject, as list pages show it.
SlotRow = queries.SlotRow


def _check_first(first: int) -> None:
    if not 0 < first <= MAX_FIRST:
        raise errors.ValidationError(
            f"first must be between 1 and {MAX_FIRST}; got {first}.", field="first"
        )


async def inbox(
    services: Services,
    actor: Principal,
    f: filters.SlotFilter,
    *,
    first: int,
    after: Cursor | None,
    caller_digest: str | None = None,
) -> tuple[list[queries.SlotRow], bool]:
    """What the actor can act on now, most urgent first; (rows, has next page).

    SQL decides it whole: held by the actor, or open and the slot's whole candidate
    rule (keys, deny keys, residual rules) admits them. ``caller_digest``: the actor is
    presumed (``service/access/callers.py``) and the page's statement checks its row; an
    empty page then proves nothing (authenticate, and ask again without it).
    """
    _check_first(first)
    async with services.db.connection() as conn:
        found = await queries.inbox(
            conn,
            principal_id=actor.id,
            keys=sorted(access.keys(actor)),
            f=f,
            after=after,
            limit=first + 1,
            caller_digest=caller_digest,
        )
    return found[:first], len(found) > first


async def inbox_count(services: Services, actor: Principal, f: filters.SlotFilter) -> int:
    """How many rows :func:`inbox` lists across all its pages (exact)."""
    async with services.db.connection() as conn:
        return await queries.inbox_count(
            conn, principal_id=actor.id, keys=sorted(access.keys(actor)), f=f
        )


async def work(
    services: Services,
    actor: Principal,
    f: filters.SlotFilter,
    *,
    first: int,
    after: Cursor | None,
) -> tuple[list[queries.SlotRow], int, bool]:
    """Every live slot, whoever holds it: for leads, and for members of the team queue asked for."""
    _check_first(first)
    f, viewer = _work_reach(actor, f)
    async with services.db.connection() as conn:
        found, total = await queries.work(conn, f=f, after=after, limit=first + 1, viewer=viewer)
    return found[:first], total, len(found) > first


def _work_reach(
    actor: Principal, f: filters.SlotFilter
) -> tuple[filters.SlotFilter, tuple[str, list[str]] | None]:
    """``f`` within the actor's reach, and the viewer of a team queue (FORBIDDEN when the
    actor may read no work)."""
    f = replace(f, scope=access.work_scope(actor, f.audience))
    # Through the team-queue path (an audience filter of keys the caller carries) a member
    # reads only the team's slots they hold or whose whole candidate rule admits them.
    mine = access.keys(actor)
    team = set(f.audience or ())
    viewer = (actor.id, sorted(mine)) if team and team <= (mine - {au.ANY_KEY}) else None
    return f, viewer


async def slot_ids(
    services: Services, actor: Principal, f: filters.SlotFilter, *, work: bool
) -> dict[str, str]:
    """Slot id -> run id of every slot :func:`inbox` (or, ``work``, :func:`work`) would list
    for the actor across its pages: where a live subscription starts."""
    async with services.db.connection() as conn:
        if not work:
            return await queries.slot_ids(conn, f, inbox_of=(actor.id, sorted(access.keys(actor))))
        f, viewer = _work_reach(actor, f)
        return await queries.slot_ids(conn, f, viewer=viewer)


@dataclass(frozen=True)
class MoveOption:
    """A manual move as a card shows it: may it be made now, and why not."""

    name: str
    label: str | None
    to: str
    allowed: bool
    guard: bool | None
    guard_text: str | None
    checklist: tuple[runtime.CheckItem, ...]
    reasons: tuple[str, ...]


def moves_for(
    services: Services, actor: Principal, run: rows.RunRow, slots: Sequence[SlotView]
) -> list[MoveOption]:
    """The current state's moves: guards, checklists, and whether the actor may make them."""
    state = run_service.state_for_reading(services, run.view)
    if run.view.status != RunStatus.ACTIVE or state is None:
        return []
    env = _env(actor, run, slots)
    options = []
    for move in state.moves:
        check = runtime.check_move(state, move, env)
        reasons = list(check.reasons)
        allowed_for = au.compile(move.by, run.view.subject) if move.by is not None else None
        permitted = allowed_for is None or allowed_for.admits(access.keys(actor))
        if not permitted:
            reasons.insert(0, f"only {allowed_for} may make it")
        options.append(
            MoveOption(
                name=move.name,
                label=move.label,
                to=move.to,
                allowed=check.allowed and permitted,
                guard=check.guard,
                guard_text=ex.describe(move.guard) if move.guard is not None else None,
                checklist=check.checklist,
                reasons=tuple(reasons),
            )
        )
    return options


def _env(actor: Principal, run: rows.RunRow, slots: Sequence[SlotView]) -> ex.Env:
    """What the run's conditions read: its subject, the payloads deposited, the actor."""
    payloads: dict[str, object] = {}
    for slot in sorted(
        (s for s in slots if s.status == SlotStatus.SATISFIED), key=lambda s: s.visit
    ):
        payloads[slot.name] = dict(slot.payload or {})
    return ex.Env(subject=run.view.subject, payload=payloads, principal=actor)


def checklist_for(
    services: Services, actor: Principal, run: rows.RunRow, slots: Sequence[SlotView]
) -> tuple[runtime.CheckItem, ...]:
    """The current state's preconditions, each with whether it holds now."""
    state = run_service.state_for_reading(services, run.view)
    if state is None:
        return ()
    return runtime.checklist(tuple(state.preconditions), _env(actor, run, slots))


@dataclass(frozen=True)
class Card:
    run: rows.RunRow
    slots: list[SlotView]
    #: (children ended, children started) of the run; (0, 0) when it started none.
    children: tuple[int, int] = (0, 0)


async def board(
    services: Services,
    actor: Principal,
    workflow: str,
    *,
    first: int,
    after: tuple[datetime, str] | None,
    include_ended: bool,
    runs: Sequence[str] | None = None,
) -> tuple[list[Card], int, bool]:
    """One card per tracked entity, its state as the lane; (cards, total, has next).
    ``runs``: only the cards of these runs (a live subscription's re-read)."""
    _check_first(first)
    services.catalog.get(workflow)
    reach = access_rules.reader(actor)
    if access_rules.covers_whole_workflow(reach, workflow):
        principal_id, keys = None, access.keys(actor)
    else:
        # Team grants reach the runs holding a live slot of their teams; anyone else sees
        # the runs where they hold, could take or may delegate a live slot.
        teams = {t for r in reach or () if r.covers_workflow(workflow) for t in r.teams or ()}
        principal_id, keys = actor.id, access.keys(actor) | teams
    async with services.db.connection() as conn:
        found, total = await queries.board_runs(
            conn,
            workflow=workflow,
            principal_id=principal_id,
            keys=sorted(keys),
            after=after,
            limit=first + 1,
            include_ended=include_ended,
            runs=runs,
        )
        page = [rows.run_from(r) for r in found[:first]]
        slots = await queries.live_slots_of_runs(conn, [r.view.id for r in page])
        kids = await child_rows.of_parents(conn, [r.view.id for r in page])
    by_run: dict[str, list[SlotView]] = {}
    for slot in slots:
        by_run.setdefault(slot.run_id, []).append(slot)
    progress: dict[str, tuple[int, int]] = {}
    for kid in kids:
        done, started = progress.get(kid.parent, (0, 0))
        ended = kid.status in (ChildStatus.ENDED, ChildStatus.SETTLED)
        progress[kid.parent] = (done + ended, started + 1)
    cards = [Card(r, by_run.get(r.view.id, []), progress.get(r.view.id, (0, 0))) for r in page]
    return cards, total, len(found) > first


async def run_detail(
    services: Services,
    actor: Principal,
    run_id: str,
    checked: access.RequestAccess | None = None,
) -> tuple[rows.RunRow, list[SlotView]]:
    """A run and all its slots, if the actor may read it (``checked``: this request's cache)."""
    return await (checked or access.RequestAccess(services, actor)).readable_run(run_id)


async def timeline(
    services: Services,
    actor: Principal,
    run_id: str,
    *,
    kinds: Sequence[str] | None,
    first: int,
    after_id: int,
    checked: access.RequestAccess | None = None,
) -> tuple[list[queries.TimelineRow], int, bool]:
    """A page of a run's timeline; link lines only for those who may read that slot's links."""
    _check_first(first)
    run, slots = await run_detail(services, actor, run_id, checked)
    async with services.db.connection() as conn:
        found, total = await queries.timeline(
            conn, run_id, kinds=kinds, after_id=after_id, limit=first + 1
        )
    by_id = {s.id: s for s in slots}

    def shown(line: queries.TimelineRow) -> queries.TimelineRow:
        slot = by_id.get(line.slot_id or "")
        if not line.kind.startswith("link.") or (
            slot is not None
            and access_rules.may_read_links(actor, run.view.workflow, slot, run.started_by)
        ):
            return line
        # The line stays (the count and the order hold); who the link was for does not.
        return replace(line, reason=None, details={})

    return [shown(t) for t in found[:first]], total, len(found) > first


async def visible_slot(services: Services, actor: Principal, slot_id: str) -> SlotView:
    """A slot whose run the actor may read; NOT_FOUND naming the slot otherwise, the same
    answer as for an id that does not exist (it never names the run behind the slot)."""
    absent = errors.NotFound(f"No slot has the id {slot_id!r}.")
    async with services.db.connection() as conn:
        slot = await rows.get_slot(conn, slot_id)
        if slot is None:
            raise absent
        # Whoever is involved in the slot sees it; others need a look at the whole run.
        if not access.involved(actor, access.keys(actor), slot):
            try:
                await run_service.readable_run(services, conn, actor, slot.run_id)
            except errors.NotFound:
                raise absent from None
    return slot
