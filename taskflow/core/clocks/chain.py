"""Which calendar a milestone's clock runs on: the one rule (docs/calendars.md, "The calendar
chain").

A milestone may declare a chain of links, tried in order (``milestone.finished(within=...,
chain=("holder", "region", "workflow"))``); the first link that names a calendar answers:

- ``holder``: the slot's holder's own calendar (the calendar of their working hours, else
  the principal's ``calendar``); no holder, or none of their own: the next link;
- ``team``: the calendar of the slot's team: the first of its teams (the ``role:`` and
  ``group:`` keys of its audience, those its holder carries first, then by name) that has
  one (``setTeamCalendar``); none: the next link;
- ``region``: the milestone's ``regions`` table read at ``subject.country`` (with
  ``subject.region`` as the subdivision first: ``"DE-BE"``, then ``"DE"``);
- ``milestone``: the milestone's ``calendar=``;
- ``workflow``: the workflow's default calendar.

Without a chain a milestone keeps the rule it always had (its ``calendar=``, else the
workflow's). A budget that names its own calendar (``business.hours(4,
calendar="x")``) wins over every link (link ``budget``). Every path that starts or moves a
clock (opening, claim, claim-next, assign, delegate, release, escalation reassign,
reassignHeld, subject changes) asks :func:`resolve`, through ``deadlines.milestone_budget``;
nothing else picks a calendar for a slot's clock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from taskflow.core.access.principals import Principal
from taskflow.core.clocks import clocks, pauses
from taskflow.core.definition import budgets as bu
from taskflow.core.definition import milestones, sla
from taskflow.core.definition.model import Slot

#: The links a chain may name, in the order the docs give them.
LINKS: Final = milestones.CHAIN_LINKS
HOLDER, TEAM, REGION, MILESTONE, WORKFLOW = LINKS
#: A milestone whose clock stands still through its holder's leave.
PAUSE = "pause"
#: The answer when the budget names its own calendar, or real time (no calendar at all).
BUDGET = "budget"
#: A clock whose calendar no link answers now: the one recorded when it last moved (a
#: definition changed since, or a holder's own calendar did).
RECORDED = "recorded"


@dataclass(frozen=True)
class People:
    """What the chain knows of holders and teams: holders' own calendar by principal id
    (None: none of their own), and the calendar of the slot's team (``team``, when
    ``teams_known``). A holder missing here, or teams not known, is unknown to this decision
    (a pure step that did not read them): the clock keeps the calendar it has."""

    calendars: Mapping[str, str | None]
    team: str | None = None
    teams_known: bool = False
    #: Holders' leave ``[from, to)`` by principal id, for milestones whose clock stands still
    #: through it (``holder_leave="pause"``); a holder missing here: their leave is unknown.
    leave: Mapping[str, tuple[tuple[datetime, datetime], ...]] = field(default_factory=dict)
    #: Holders' attributes by principal id (the ``region`` link's ``holder.<attribute>``).
    attributes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: ``(calendar,)``: the chain answers this, the clock's own (``knowing``: a decision
    #: that does not know the holder or team keeps it); empty: ask the links.
    kept: tuple[str | None, ...] = ()


NOBODY: Final = People({})


def asks_holder(milestones: Iterable[sla.Milestone]) -> bool:
    """Whether any of these milestones' chains asks the holder or the team (their shell then
    reads the holder's and the teams' calendars; slots without one never pay that read)."""
    return any(
        _asks_holder(ms) or TEAM in ms.chain or ms.holder_leave == PAUSE for ms in milestones
    )


def _asks_holder(ms: sla.Milestone) -> bool:
    """The chain asks the holder: their own calendar, or their attribute naming a region."""
    return HOLDER in ms.chain or (REGION in ms.chain and ms.region_from.startswith("holder."))


def asks_team(milestones: Iterable[sla.Milestone]) -> bool:
    """Whether any of these milestones' chains asks the slot's team."""
    return any(TEAM in ms.chain for ms in milestones)


def teams_of(audience: Iterable[str], holder_keys: Container[str] = ()) -> tuple[str, ...]:
    """A slot's teams in the order the ``team`` link asks them: the ``role:`` and ``group:``
    keys of its audience, those its holder carries first, then by name."""
    teams = sorted(k for k in audience if k.startswith(("role:", "group:")))
    return tuple(sorted(teams, key=lambda k: k not in holder_keys))


def team_calendar(
    teams: Iterable[str], calendars: Mapping[str, str], known: Container[str]
) -> str | None:
    """The calendar the ``team`` link answers: the first of ``teams`` with a loaded one."""
    return next((calendars[t] for t in teams if calendars.get(t) in known), None)


def people(principals: Iterable[Principal], known: Container[str]) -> People:
    """The holders' own calendars: the calendar their working hours name, else the
    principal's ``calendar``; one not loaded (``known``) counts as none."""
    found: dict[str, str | None] = {}
    leave: dict[str, tuple[tuple[datetime, datetime], ...]] = {}
    for p in principals:
        own = (p.working_hours.calendar if p.working_hours else None) or p.calendar
        found[p.id] = own if own is not None and own in known else None
        leave[p.id] = tuple((e.start, e.end) for e in p.leave)
    return People(found, leave=leave, attributes={p.id: p.attributes for p in principals})


def on_leave(
    decl: Slot, ledger: tuple[clocks.Clock, ...], holder: str | None, now: datetime, people: People
) -> tuple[clocks.Clock, ...]:
    """Each unmet clock whose milestone stands still through its holder's leave, paused from
    ``now`` through the leave of ``holder`` (none: nobody holds it); a holder ``people`` does
    not know the leave of: as it is (a pure engine step)."""
    if holder is not None and holder not in people.leave:
        return ledger
    leave = people.leave.get(holder, ()) if holder is not None else ()
    out = []
    for c in ledger:
        ms = decl.milestone(c.milestone)
        if ms is None or ms.holder_leave != PAUSE or c.met_at is not None:
            out.append(c)
        else:
            out.append(dataclasses.replace(c, pauses=pauses.through_leave(c.pauses, leave, now)))
    return tuple(out)


@dataclass(frozen=True)
class Answer:
    """The calendar (None: real time) and the link that named it."""

    calendar: str | None
    link: str


def _region(
    milestone: sla.Milestone, subject: Mapping[str, Any], holder: str | None, people: People
) -> str | None:
    table = milestone.regions
    if milestone.region_from:
        source, _, path = milestone.region_from.partition(".")
        found: Any = people.attributes.get(holder or "", {}) if source == "holder" else subject
        for part in path.split("."):
            found = found.get(part) if isinstance(found, Mapping) else None
        if not isinstance(found, str) or not found:
            return None
        code = found.upper()  # "DE-BY": the subdivision first, then the country
        return table.get(code) or table.get(code.split("-", 1)[0])
    country = subject.get("country")
    if not isinstance(country, str) or not country:
        return None
    region = subject.get("region")
    if isinstance(region, str) and region:
        named = table.get(f"{country}-{region}".upper())
        if named is not None:
            return named
    return table.get(country.upper())


def _link(
    link: str,
    definition_calendar: str | None,
    milestone: sla.Milestone,
    subject: Mapping[str, Any],
    holder: str | None,
    people: People,
) -> str | None:
    if link == HOLDER:
        return people.calendars.get(holder) if holder is not None else None
    if link == TEAM:
        return people.team
    if link == REGION:
        return _region(milestone, subject, holder, people)
    if link == MILESTONE:
        return milestone.calendar
    return definition_calendar


def inherited(
    definition_calendar: str | None,
    milestone: sla.Milestone,
    subject: Mapping[str, Any],
    holder: str | None,
    people: People,
) -> Answer:
    """The calendar a business budget naming none runs on, and the link that answered."""
    if people.kept:
        return Answer(people.kept[0], RECORDED)
    for link in milestone.chain or (MILESTONE, WORKFLOW):
        named = _link(link, definition_calendar, milestone, subject, holder, people)
        if named is not None:
            return Answer(named, link)
    return Answer(None, WORKFLOW)


def holder_known(milestone: sla.Milestone, holder: str | None, people: People) -> bool:
    """False when the chain asks the holder (or the team) and this decision does not know
    them: the clock then keeps its calendar (a pure engine step re-deciding without reading
    principals or teams)."""
    if TEAM in milestone.chain and not people.teams_known:
        return False
    return not _asks_holder(milestone) or holder is None or holder in people.calendars


def resolve(
    definition_calendar: str | None,
    milestone: sla.Milestone,
    subject: Mapping[str, Any],
    holder: str | None,
    people: People,
) -> tuple[bu.ResolvedBudget | None, Answer]:
    """The milestone's budget for this subject and holder, and which link answered."""
    answer = inherited(definition_calendar, milestone, subject, holder, people)
    budget = bu.resolve_budget(milestone.within, subject, answer.calendar)
    if budget is None or budget.kind == "real":
        return budget, Answer(None, BUDGET)
    if budget.calendar != answer.calendar:
        return budget, Answer(budget.calendar, BUDGET)
    return budget, answer


def knowing(ms: sla.Milestone, calendar: str | None, holder: str | None, people: People) -> People:
    """``people``, or, when they do not know the holder or team the chain asks, ``people``
    answering ``calendar`` (the one the clock has: a pure step keeps it)."""
    if holder_known(ms, holder, people):
        return people
    return dataclasses.replace(people, kept=(calendar,))


def rechain(
    definition_calendar: str | None,
    decl: Slot,
    ledger: tuple[clocks.Clock, ...],
    holder: str | None,
    subject: Mapping[str, Any],
    now: datetime,
    people: People,
) -> tuple[clocks.Clock, ...]:
    """Each unmet clock whose chain asks the holder or the team on the calendar the chain
    answers for ``holder`` now, under its milestone's recompute policy (docs/calendars.md,
    "When the holder changes"); a holder or team ``people`` does not know: as it is."""
    out = []
    for c in ledger:
        ms = decl.milestone(c.milestone)
        if ms is None or not asks_holder((ms,)) or c.met_at is not None:
            out.append(c)
            continue
        budget, _ = resolve(definition_calendar, ms, subject, holder, people)
        known = holder_known(ms, holder, people)
        out.append(
            c if budget is None or not known else clocks.rebudget(c, budget, now, ms.recompute)
        )
    return tuple(out)


def link_of(
    definition_calendar: str | None,
    ms: sla.Milestone | None,
    calendar: str | None,
    subject: Mapping[str, Any],
    holder: str | None,
    people: People,
) -> str:
    """Which link measured a clock on ``calendar`` ("why is it due then"): the chain's
    answer for the slot as it is, or ``recorded`` when that answers another calendar."""
    if ms is None:
        return RECORDED
    _, said = resolve(definition_calendar, ms, subject, holder, people)
    return said.link if said.calendar == calendar else RECORDED
