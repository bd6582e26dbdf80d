"""Queries of the work API: inbox, work, board, run, slot."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from taskflow import errors
from taskflow.api.graphql.clocks import run_deadline
from taskflow.api.graphql.common import listing, relay, targets
from taskflow.api.graphql.common.context import (
    Info,
    caller,
    checked,
    confirm,
    doubt,
    presume_alone,
)
from taskflow.api.graphql.reports import forecast, reports
from taskflow.api.graphql.runs.types import (
    RUN,
    SLOT,
    MoveOption,
    RunType,
    SlotType,
    Subject,
    move_options,
    slot_from_row,
)
from taskflow.core.access.principals import Principal
from taskflow.core.runs.model import RunView, SlotView
from taskflow.core.slots.filters import SlotFilter
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.service.slots import views

First = listing.FIRST_50
After = Annotated[str | None, strawberry.argument(description="endCursor of the previous page.")]


@strawberry.input(description="Narrows the inbox (and claimNext). All given filters must match.")
class InboxFilter(targets.SlotPlaceFilter):
    priority_at_most: int | None = strawberry.field(
        default=None, description="Only priority 1..n (1 is the most urgent)."
    )
    due_before: datetime | None = strawberry.field(
        default=None, description="Only slots due before this instant."
    )

    def to_filter(self) -> SlotFilter:
        return SlotFilter(
            workflow=self.workflow,
            state=self.state,
            name=self.slot,
            priority_at_most=self.priority_at_most,
            due_before=self.due_before,
        )


@strawberry.input(description="Narrows the work list. All given filters must match.")
class WorkFilter:
    holder: str | None = strawberry.field(default=None, description="Held by this login.")
    workflow: str | None = strawberry.field(default=None, description="Only this workflow.")
    state: str | None = strawberry.field(default=None, description="Only slots of this state.")
    audience: list[str] | None = strawberry.field(
        default=None,
        description="A team queue: slots whose candidates include any of these keys "
        "(role:finance, group:emea). Members of that team may read it.",
    )
    at_risk: bool = strawberry.field(
        default=False,
        description="Only slots at risk now (a running clock with 25 % or less of its budget "
        "left), least business time left first; for leads, managers and admins (all of it).",
    )

    def to_filter(self) -> SlotFilter:
        return SlotFilter(
            holder=self.holder, workflow=self.workflow, state=self.state, audience=self.audience
        )


def slot_cursor(cursor: str | None) -> views.Cursor | None:
    if not cursor:
        return None
    due, priority, slot_id = relay.decode_typed(cursor, "datetime?", "int", "uuid")
    return (due, priority, slot_id)


def encode_slot_cursor(row: views.SlotRow) -> str:
    due, priority, slot_id = row.cursor
    return relay.encode_cursor(due.isoformat() if due else "", str(priority), slot_id)


def slot_connection(
    found: list[views.SlotRow], total: int | None, has_next: bool
) -> relay.Connection[SlotType]:
    return relay.connection(
        found, slot_from_row, encode_slot_cursor, total=total, has_next=has_next
    )


@strawberry.type(
    description="One card of a board: a tracked entity, its lane and what can be done."
)
class Card:
    run: RunType = strawberry.field(description="The run behind the card.")
    lane: str = strawberry.field(description="The lane: the run's state.")
    subject: Subject = strawberry.field(description="The tracked entity.")
    slots: list[SlotType] = strawberry.field(description="Its live slots (pending, open, claimed).")
    moves: list[MoveOption] = strawberry.field(description="Its manual moves as they stand now.")
    child_progress: ChildProgress | None = strawberry.field(
        description="How many of the child runs it started have ended (null: it started none)."
    )
    view: strawberry.Private[RunView]

    @strawberry.field(
        description="The run's deadline across states (due, status, milestones); null when it "
        "has none."
    )
    async def deadline(self, info: Info) -> run_deadline.RunDeadline | None:
        return await run_deadline.deadline_of_run(info, self.view)


@strawberry.type(description="Child runs of a board card's run: done of total.")
class ChildProgress:
    done: int = strawberry.field(description="Children that ended.")
    total: int = strawberry.field(description="Children it started (or is starting).")


async def _inbox_page(
    info: Info, me: Principal, f: SlotFilter, found: list[views.SlotRow], has_next: bool
) -> relay.Connection[SlotType]:
    """The inbox's connection of ``found``, counted only when asked for (the page alone is
    the hot path)."""
    services = info.context.services
    total = await views.inbox_count(services, me, f) if relay.selects(info, "totalCount") else None
    return slot_connection(found, total, has_next)


def card_of(services: Services, me: Principal, card: views.Card) -> Card:
    """The board's Card of ``card`` as ``me`` sees it (its moves checked for them)."""
    run = RunType.of(card.run)
    return Card(
        run=run,
        lane=card.run.view.state,
        subject=run.subject,
        slots=[
            SlotType.of(
                s,
                workflow=card.run.view.workflow,
                definition_version=card.run.view.definition_version,
                run_state=card.run.view.state,
                subject=run.subject,
            )
            for s in card.slots
        ],
        moves=move_options(views.moves_for(services, me, card.run, card.slots)),
        child_progress=(
            ChildProgress(done=card.children[0], total=card.children[1])
            if card.children[1]
            else None
        ),
        view=card.run.view,
    )


@strawberry.type
class WorkQueries:
    @strawberry.field(
        description="Every slot you can act on now (held by you, or open and its whole "
        "candidate rule admits you), across workflows, most urgent first (nearest due, then "
        "priority). totalCount is exact; it costs one more query, so ask for it only when shown."
    )
    async def inbox(
        self,
        info: Info,
        first: First = 50,
        after: After = None,
        filter: Annotated[
            InboxFilter | None, strawberry.argument(description="Narrow the list.")
        ] = None,
    ) -> relay.Connection[SlotType]:
        services = info.context.services
        presumed = info.context.principal if presume_alone(info) else None
        if presumed is not None:
            # The page's statement checks the caller (service/access/callers.py): one round
            # trip. An empty page, or any refusal, proves nothing of the caller: forget the
            # presumption and answer the ordinary way (authentication first, as ever).
            try:
                f = (filter or InboxFilter()).to_filter()
                cursor = slot_cursor(after)
                digest = info.context.caller_digest
                found, has_next = await views.inbox(
                    services, presumed, f, first=first, after=cursor, caller_digest=digest
                )
            except Exception:
                found = []
            if found:
                confirm(info)
                return await _inbox_page(info, presumed, f, found, has_next)
            doubt(info)
        me = await caller(info)
        f = (filter or InboxFilter()).to_filter()
        found, has_next = await views.inbox(services, me, f, first=first, after=slot_cursor(after))
        return await _inbox_page(info, me, f, found, has_next)

    @listing.connection(
        WorkFilter,
        "Narrow the list.",
        first=50,
        first_type=First,
        ordered=(forecast.WorkOrder.URGENCY, "The order: most urgent (default) or breach risk."),
    )
    async def work(
        self, info: Info, me: Principal, page: listing.Page, filter: WorkFilter
    ) -> relay.Connection[SlotType]:
        """Every live slot, whoever holds it, most urgent first (or most likely to breach
        first): for leads, managers and admins, and for members of a team reading their
        team's queue (filter.audience)."""
        f = filter.to_filter()
        if page.order is forecast.WorkOrder.BREACH_RISK:
            if filter.at_risk:
                raise errors.ValidationError(
                    "filter.atRisk lists by the clock's share; orderBy: BREACH_RISK ranks the "
                    "whole list by forecast: ask one or the other.",
                    field="orderBy",
                )
            return await forecast.by_breach_risk_connection(info, me, f, page.first, page.after)
        if filter.at_risk:
            return await reports.at_risk_connection(info, me, f, page.first, page.after)
        found, total, has_next = await views.work(
            info.context.services, me, f, first=page.first, after=slot_cursor(page.after)
        )
        return slot_connection(found, total, has_next)

    @strawberry.field(description="One card per tracked entity of a workflow, in lanes by state.")
    async def board(
        self,
        info: Info,
        workflow: Annotated[str, strawberry.argument(description="The workflow's name.")],
        first: First = 50,
        after: After = None,
        include_ended: Annotated[
            bool, strawberry.argument(description="Include completed and cancelled runs.")
        ] = False,
    ) -> relay.Connection[Card]:
        me = await caller(info)
        cursor = None
        if after:
            started, run_id = relay.decode_typed(after, "datetime", "uuid")
            cursor = (started, run_id)
        services = info.context.services
        cards, total, has_next = await views.board(
            services, me, workflow, first=first, after=cursor, include_ended=include_ended
        )
        edges = [
            relay.Edge(
                cursor=relay.encode_cursor(card.run.started_at.isoformat(), card.run.view.id),
                node=card_of(services, me, card),
            )
            for card in cards
        ]
        return relay.page(edges, has_next, total)

    @strawberry.field(description="A run you may read (null when absent or not visible).")
    async def run(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The run's global id.")],
    ) -> RunType | None:
        return await resolve_run(info, _local(id, RUN))

    @strawberry.field(description="A slot you may read (null when absent or not visible).")
    async def slot(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The slot's global id.")],
    ) -> SlotType | None:
        return await resolve_slot(info, _local(id, SLOT))


def _local(global_id: str, type_name: str) -> str:
    try:
        found_type, local = relay.from_global_id(str(global_id))
    except errors.NotFound:
        return ""
    return local if found_type == type_name else ""


async def resolve_run(info: Info, local_id: str) -> RunType | None:
    me = await caller(info)
    if not local_id:
        return None
    try:
        run, _ = await views.run_detail(info.context.services, me, local_id, await checked(info))
    except errors.NotFound:
        return None
    return RunType.of(run)


async def resolve_slot(info: Info, local_id: str) -> SlotType | None:
    me = await caller(info)
    if not local_id:
        return None
    services = info.context.services
    request = await checked(info)
    # A mutation answers from the rows its own write returned (checked as if fetched).
    seen = request.seen_slot(local_id)
    if seen is not None:
        slot, run = seen
    else:
        try:
            slot = await views.visible_slot(services, me, local_id)
            run = (await views.run_detail(services, me, slot.run_id, request))[0].head
        except errors.NotFound:
            return None
    return slot_type_of(slot, run)


def slot_type_of(slot: SlotView, run: access.SeenRun) -> SlotType:
    """The Slot of ``slot`` on its run ``run`` (as the caller may read it)."""
    return SlotType.of(
        slot,
        workflow=run.workflow,
        definition_version=run.definition_version,
        run_state=run.state,
        subject=Subject.of(
            run.subject_type, run.subject_external_id, run.subject, run.workflow, run.state
        ),
    )
