"""``type Subscription``: inboxChanged, boardChanged, slotChanged, runChanged, workChanged.

Each field subscribes to the process's live hub (``service/live/hub.py``) under the
caller's principal and yields each changed row as the caller sees it at that moment, or
its removal (the row null): the hub reads with the same use cases as the queries. Every
change carries a ``cursor``; a client that reconnects passes the last one as ``after``
and first receives what changed since (docs/live.md, "Resume").
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Annotated, TypeVar

import strawberry

from taskflow import errors
from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.context import Info, caller
from taskflow.api.graphql.runs.types import RUN, SLOT, RunType, SlotType, slot_from_row
from taskflow.api.graphql.slots import work
from taskflow.service.live import hub as live_hub
from taskflow.service.live import topics
from taskflow.service.live.subscribers import Change

T = TypeVar("T")

After = Annotated[
    str | None,
    strawberry.argument(
        description="The cursor of the last change you received: what changed since comes "
        "first (within the server's resume window)."
    ),
]


@strawberry.type(
    description="A slot that entered, changed in or left what you watch (your inbox, a "
    "work list, one slot), as you may see it at that moment."
)
class SlotChange:
    cursor: str = strawberry.field(description="Pass as `after` to resume after this change.")
    slot_id: strawberry.ID = strawberry.field(description="The slot's global id.")
    slot: SlotType | None = strawberry.field(
        description="The slot now; null: it left what you watch, or you may no longer see it."
    )


@strawberry.type(description="A card entering, moving in or leaving a board (or its lane).")
class BoardChange:
    cursor: str = strawberry.field(description="Pass as `after` to resume after this change.")
    run_id: strawberry.ID = strawberry.field(description="The run's global id.")
    card: work.Card | None = strawberry.field(
        description="The card as the board shows it now; null: it left the board or lane."
    )


@strawberry.type(description="A run you watch, as you may see it now.")
class RunChange:
    cursor: str = strawberry.field(description="Pass as `after` to resume after this change.")
    run_id: strawberry.ID = strawberry.field(description="The run's global id.")
    run: RunType | None = strawberry.field(
        description="The run now; null: you may no longer see it."
    )


def _cursor(after: str | None) -> int | None:
    if after is None:
        return None
    if not after.isdigit() or len(after) > 18:
        raise errors.ValidationError(
            f"after must be a cursor this API gave out (digits); got {after[:40]!r}.",
            field="after",
        )
    return int(after)


async def _stream(
    info: Info, topic: topics.Topic, after: str | None, shape: Callable[[Change], T]
) -> AsyncGenerator[T, None]:
    me = await caller(info)
    context = info.context
    settings = context.services.settings.live
    sub = await live_hub.hub_for(context.services).subscribe(
        topic,
        me,
        after=_cursor(after),
        max_queued=settings.max_queued,
        window=settings.resume_window,
        dropped=context.live_dropped or (lambda: None),
    )
    try:
        async for change in sub.changes():
            yield shape(change)
    finally:
        sub.close()


def _listed(change: Change) -> SlotChange:
    """A change of a list (inbox, work): its row as the list shows it."""
    row = change.row
    return SlotChange(
        cursor=str(change.cursor),
        slot_id=relay.node_id(SLOT, change.key),
        slot=slot_from_row(row) if row is not None else None,
    )


@strawberry.type(description="Live changes over graphql-transport-ws at /graphql (docs/live.md).")
class Subscription:
    @strawberry.subscription(
        description="Your inbox as it changes: each slot that enters it, changes in it or "
        "leaves it (claimed by someone else, no longer yours to take, done)."
    )
    async def inbox_changed(
        self,
        info: Info,
        after: After = None,
        filter: Annotated[
            work.InboxFilter | None, strawberry.argument(description="Narrow the inbox.")
        ] = None,
    ) -> AsyncGenerator[SlotChange, None]:
        f = (filter or work.InboxFilter()).to_filter()
        topic = topics.Topic(topics.INBOX, filter=f)
        async for change in _stream(info, topic, after, _listed):
            yield change

    @strawberry.subscription(
        description="A work list as it changes (the same powers as the work query: leads, "
        "managers, admins; team members on their team's queue)."
    )
    async def work_changed(
        self,
        info: Info,
        filter: Annotated[work.WorkFilter, strawberry.argument(description="The list.")],
        after: After = None,
    ) -> AsyncGenerator[SlotChange, None]:
        topic = topics.Topic(topics.WORK, filter=filter.to_filter())
        async for change in _stream(info, topic, after, _listed):
            yield change

    @strawberry.subscription(description="A workflow's board (or one lane of it) as it changes.")
    async def board_changed(
        self,
        info: Info,
        workflow: Annotated[str, strawberry.argument(description="The workflow's name.")],
        lane: Annotated[
            str | None, strawberry.argument(description="Only this lane (a state's name).")
        ] = None,
        after: After = None,
    ) -> AsyncGenerator[BoardChange, None]:
        me = await caller(info)
        services = info.context.services

        def shape(change: Change) -> BoardChange:
            card = work.card_of(services, me, change.row) if change.row is not None else None
            return BoardChange(
                cursor=str(change.cursor), run_id=relay.node_id(RUN, change.key), card=card
            )

        topic = topics.Topic(topics.BOARD, workflow=workflow, lane=lane)
        async for change in _stream(info, topic, after, shape):
            yield change

    @strawberry.subscription(description="One slot as it changes, while you may see it.")
    async def slot_changed(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The slot's global id.")],
        after: After = None,
    ) -> AsyncGenerator[SlotChange, None]:
        topic = topics.Topic(topics.SLOT, id=relay.local_id(id, SLOT, "id"))
        async for change in _stream(info, topic, after, _watched_slot):
            yield change

    @strawberry.subscription(description="One run as it changes, while you may read it.")
    async def run_changed(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The run's global id.")],
        after: After = None,
    ) -> AsyncGenerator[RunChange, None]:
        async for change in _stream(
            info, topics.Topic(topics.RUN, id=relay.local_id(id, RUN, "id")), after, _watched_run
        ):
            yield change


def _watched_slot(change: Change) -> SlotChange:
    row = work.slot_type_of(*change.row) if change.row is not None else None
    return SlotChange(cursor=str(change.cursor), slot_id=relay.node_id(SLOT, change.key), slot=row)


def _watched_run(change: Change) -> RunChange:
    run = RunType.of(change.row) if change.row is not None else None
    return RunChange(cursor=str(change.cursor), run_id=relay.node_id(RUN, change.key), run=run)
