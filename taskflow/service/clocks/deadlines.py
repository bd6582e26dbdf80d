"""Deadlines around a decision: loading the slots it decides on, a slot moved by a statement
carried out through the unit of work, and clocks as a screen reads them.

Planning what a decision writes (clocks, due instants, timers, timeline) is
``core/common/unit_of_work.plan``; writing it is ``store/common/unit_of_work.write``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from taskflow.core.clocks import calendars, chain, clocks, deadlines, run_deadline
from taskflow.core.clocks import terms as clock_terms
from taskflow.core.common import unit_of_work as uow
from taskflow.core.common.unit_of_work import Context, context
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import AuditEntry, Outcome, RunView, SlotView
from taskflow.service.common.container import Services
from taskflow.store.access import principals as principal_rows
from taskflow.store.clocks import deadlines as store
from taskflow.store.clocks import team_calendars as team_rows
from taskflow.store.common import db, locks
from taskflow.store.common import unit_of_work as writer
from taskflow.store.runs import runs as rows
from taskflow.store.slots import held as held_rows

__all__ = ["Context", "context"]


def sla_of(
    services: Services,
    definition: Definition,
    slots: Sequence[SlotView] = (),
    actor: str | None = None,
) -> Context:
    """The deadline context of a decision on ``definition`` over ``slots`` as loaded: the
    services' calendars and at-risk share (``TASKFLOW_SLA_AT_RISK``)."""
    return context(
        definition, services.calendars, slots, actor, at_risk=services.settings.sla_at_risk
    )


async def holders(
    services: Services, conn: db.Connection, definition: Definition, slot: SlotView
) -> chain.People:
    """What the calendar chain needs to know of the slot's holder and team (one read each,
    and only when a milestone of the slot's chain asks them): their own calendars."""
    return await people_of(conn, services.calendars.names(), definition, slot)


async def people_of(
    conn: db.Connection, known: Container[str], definition: Definition, slot: SlotView
) -> chain.People:
    """:func:`holders` with the loaded calendars' names (``known``)."""
    decl = definition.slot(slot.state, slot.name)
    if not chain.asks_holder(decl.milestones):
        return chain.NOBODY
    found = await principal_rows.get_many(conn, [slot.holder]) if slot.holder else {}
    people = chain.people(found.values(), known) if found else chain.NOBODY
    if slot.holder is not None and not found:
        people = chain.People({slot.holder: None})
    if not chain.asks_team(decl.milestones):
        return people
    holder = found.get(slot.holder) if slot.holder else None
    teams = chain.teams_of(slot.audience.keys, holder.audience_keys if holder else ())
    table = await team_rows.of_teams(conn, teams)
    return dataclasses.replace(
        people, team=chain.team_calendar(teams, table, known), teams_known=True
    )


async def opened_on_team(
    conn: db.Connection, ctx: Context, result: Outcome, now: datetime
) -> Outcome:
    """``result`` with the clocks of the slots it opened started on the calendar their team
    answers, when a chain asks the team: the engine's steps read no teams, so they started
    them on the links after ``team`` (and nothing has run on them yet)."""
    definition = ctx.definition
    created = list(result.created)
    for i, view in enumerate(created):
        if view.clocks and chain.asks_team(definition.slot(view.state, view.name).milestones):
            people = await people_of(conn, ctx.registry.names(), definition, view)
            fresh = dataclasses.replace(view, clocks=())
            subject = result.run.subject
            created[i] = deadlines.sync_clocks(definition, fresh, subject, now, people)
    return dataclasses.replace(result, created=tuple(created))


async def load_slots(conn: db.Connection, run_id: str) -> list[SlotView]:
    """A run's slots with their clock ledgers (what the engine decides on)."""
    return await store.with_clocks(conn, await rows.slots_of_run(conn, run_id))


async def after_slot_move(
    services: Services,
    conn: db.Connection,
    moved: store.SlotContext,
    now: datetime,
    actor: str | None,
    lines: Sequence[AuditEntry] = (),
) -> None:
    """Clocks, timers and ``lines`` after a claim, release or assignment written outside the
    engine: the statement that moved the slot read what this needs, so this is one write."""
    run = moved.run.view
    definition = services.catalog.get(run.workflow, run.definition_version)
    people = await holders(services, conn, definition, moved.slot)
    after = deadlines.sync_clocks(definition, moved.slot, run.subject, now, people)
    ctx = sla_of(services, definition, [moved.slot], actor)
    result = Outcome(run, (), (after,), tuple(lines), run_changed=False)
    await writer.write(conn, uow.plan(result, ctx, moved.timers, now, rows=False), now)


async def rechain_one(
    services: Services,
    conn: db.Connection,
    run_id: str,
    slot_id: str,
    now: datetime,
    actor: str,
    still: Callable[[SlotView], bool] = lambda _: True,
) -> bool:
    """Move one slot's clocks onto the calendar its chain answers now (holder, team), under
    their recompute policies, in the caller's transaction: its run and row locked first, and
    nothing done when the run is over, the slot gone, or no longer ``still`` as decided."""
    await locks.lock_run(conn, run_id)
    run = await rows.get_run(conn, run_id, lock=True)
    current = await rows.get_slot(conn, slot_id, lock=True)
    if run is None or current is None or not current.live or not still(current):
        return False
    [loaded] = await store.with_clocks(conn, [current])
    timers, _ = await store.timers_for(conn, [slot_id], None)
    await after_slot_move(services, conn, store.SlotContext(loaded, run, timers), now, actor)
    return True


async def holder_on_leave(
    services: Services, conn: db.Connection, holder: str, now: datetime, actor: str
) -> None:
    """After ``holder``'s leave changed: the clocks of the slots they hold whose milestone
    stands still through the holder's leave paused from ``now`` through it (docs/sla.md, "A
    holder's leave"), in the caller's transaction, each run locked, then its slot."""
    pausing = {
        d.name
        for d in services.catalog
        for _, slot in d.slots()
        if any(ms.holder_leave == chain.PAUSE for ms in slot.milestones)
    }
    if not pausing:  # no workflow stands a clock still for leave: nothing to read
        return
    held = await held_rows.held_slots(conn, holder, sorted(pausing))
    for slot in sorted(held, key=lambda s: (s.run_id, s.id)):  # the lock order
        await rechain_one(
            services, conn, slot.run_id, slot.id, now, actor, lambda s: s.holder == holder
        )


async def opened_by_batch(
    services: Services,
    conn: db.Connection,
    batch: Iterable[tuple[RunView, Iterable[SlotView]]],
    now: datetime,
) -> None:
    """Slots a worker's batch opened at ``now`` (a timeout's or an automatic step's move, a
    scheduled start) whose chain asks the team: the batch's planner reads no teams, so
    their clocks started on the links after ``team``; moved onto the team's calendar here,
    in the batch's transaction, before any time is spent (a ``clock.recomputed`` line at
    the opening instant; none when the team answers the same calendar)."""
    for run, slots in batch:
        definition = services.catalog.get(run.workflow, run.definition_version)
        for slot in slots:
            decl = definition.slot(slot.state, slot.name)
            if slot.live and slot.opened_at == now and chain.asks_team(decl.milestones):
                await rechain_one(services, conn, run.id, slot.id, now, "system")


# -- reading -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClockReading:
    """A clock as a screen shows it at ``now``: the ledger and what follows from it."""

    clock: clocks.Clock
    calendar: str
    budget: timedelta
    elapsed: timedelta
    remaining: timedelta
    due_at: datetime | None
    status: str
    met_at: datetime | None
    breached_at: datetime | None
    explain: list[str]
    #: Each deadline the clock had and when it was in force (budget changes mid-run).
    terms: list[clock_terms.Term]
    #: The link of the calendar chain that named ``calendar`` (``core/clocks/chain.py``).
    link: str = chain.RECORDED


def read(
    registry: calendars.Registry,
    clock: clocks.Clock,
    now: datetime,
    at_risk: float = clocks.DEFAULT_AT_RISK,
    link: str = chain.RECORDED,
) -> ClockReading:
    """Everything derived from one ledger at ``now`` (at risk past ``at_risk`` of the budget;
    ``link``: the chain's link that named its calendar)."""
    cal = clocks.calendar_of(registry, clock)
    return ClockReading(
        clock=clock,
        calendar=clock.calendar or "real time",
        budget=clocks.budget_time(clock, cal),
        elapsed=clocks.elapsed(clock, cal, now),
        remaining=clocks.remaining(clock, cal, now),
        due_at=clocks.due_at(clock, cal),
        status=clocks.status(clock, cal, now, at_risk, registry),
        met_at=clock.met_at,
        breached_at=clocks.breached_at(clock, cal, now, registry),
        explain=clocks.explain(clock, cal),
        terms=clock_terms.in_force(clock, cal, now, registry),
        link=link,
    )


async def readings(services: Services, slot_ids: Sequence[str]) -> dict[str, list[ClockReading]]:
    """The clocks of these slots as of the services' clock (the caller checked visibility),
    each with the link of the calendar chain that named its calendar."""
    now = services.clock.now()
    async with services.db.connection() as conn:
        found = await store.clocks_of(conn, slot_ids)
        facts = await store.chain_facts(conn, [s for s in slot_ids if found.get(s)])
        teams = await _teams(services, conn, facts.values())
    share = services.settings.sla_at_risk
    return {
        slot_id: [
            read(services.calendars, c, now, share, _link(services, facts.get(slot_id), c, teams))
            for c in found.get(slot_id, ())
        ]
        for slot_id in slot_ids
    }


@dataclass(frozen=True)
class _Teams:
    """What the ``team`` link reads for naming links: the teams' calendars, and the keys
    each holder carries (their own teams are asked first)."""

    calendars: Mapping[str, str]
    holder_keys: Mapping[str, frozenset[str]]


async def _teams(
    services: Services, conn: db.Connection, facts: Iterable[store.ChainFacts]
) -> _Teams:
    asking = [f for f in facts if _asks_team(services, f)]
    if not asking:
        return _Teams({}, {})
    calendars = await team_rows.of_teams(conn, {k for f in asking for k in f.audience})
    held = sorted({f.holder for f in asking if f.holder})
    people = await principal_rows.get_many(conn, held) if held else {}
    return _Teams(calendars, {p.id: p.audience_keys for p in people.values()})


def _asks_team(services: Services, facts: store.ChainFacts) -> bool:
    definition = services.catalog.get(facts.workflow, facts.version)
    return chain.asks_team(definition.slot(facts.state, facts.name).milestones)


def _link(
    services: Services, facts: store.ChainFacts | None, clock: clocks.Clock, teams: _Teams
) -> str:
    if facts is None:
        return chain.RECORDED
    definition = services.catalog.get(facts.workflow, facts.version)
    ms = definition.slot(facts.state, facts.name).milestone(clock.milestone)
    own = facts.holder_calendar if facts.holder_calendar in services.calendars else None
    people = chain.People({facts.holder: own}) if facts.holder else chain.NOBODY
    if _asks_team(services, facts):
        keys = teams.holder_keys.get(facts.holder or "", frozenset())
        found = chain.team_calendar(
            chain.teams_of(facts.audience, keys), teams.calendars, services.calendars.names()
        )
        people = dataclasses.replace(people, team=found, teams_known=True)
    return chain.link_of(
        definition.calendar, ms, clock.calendar, facts.subject, facts.holder, people
    )


async def run_deadline_of(services: Services, run: RunView) -> run_deadline.Reading | None:
    """``Run.deadline``: the run's deadline as of the services' clock, with the milestones
    its timers fired (None: the workflow declares none, or the subject gives no date)."""
    definition = services.catalog.get(run.workflow, run.definition_version)
    share = services.settings.sla_at_risk
    found = run_deadline.due(definition, run, services.calendars, share)
    if found is None:
        return None
    async with services.db.connection() as conn:
        _, of_run = await store.timers_for(conn, [], run.id)
    fired = {t.kind: t.due_at for t in of_run if t.kind in run_deadline.KINDS and t.fired}
    return run_deadline.read(found, run, services.clock.now(), fired)
