"""Deadlines around a decision: loading the slots it decides on, a slot moved by a statement
carried out through the unit of work, and clocks as a screen reads them.

Planning what a decision writes (clocks, due instants, timers, timeline) is
``core/common/unit_of_work.plan``; writing it is ``store/common/unit_of_work.write``.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from taskflow.store.common import db
from taskflow.store.common import unit_of_work as writer
from taskflow.store.runs import runs as rows

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
    """What the calendar chain needs to know of the slot's holder (one read, and only when a
    milestone of the slot's chain asks the holder): their own calendar."""
    decl = definition.slot(slot.state, slot.name)
    if slot.holder is None or not chain.asks_holder(decl.milestones):
        return chain.NOBODY
    found = await principal_rows.get_many(conn, [slot.holder])
    known = services.calendars.names()
    return chain.people(found.values(), known) if found else chain.People({slot.holder: None})


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
    share = services.settings.sla_at_risk
    return {
        slot_id: [
            read(services.calendars, c, now, share, _link(services, facts.get(slot_id), c))
            for c in found.get(slot_id, ())
        ]
        for slot_id in slot_ids
    }


def _link(services: Services, facts: store.ChainFacts | None, clock: clocks.Clock) -> str:
    if facts is None:
        return chain.RECORDED
    definition = services.catalog.get(facts.workflow, facts.version)
    ms = definition.slot(facts.state, facts.name).milestone(clock.milestone)
    own = facts.holder_calendar if facts.holder_calendar in services.calendars else None
    people = chain.People({facts.holder: own}) if facts.holder else chain.NOBODY
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
