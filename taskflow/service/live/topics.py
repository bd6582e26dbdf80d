"""What each subscription watches, and how one batch of changes is read for a group.

A topic is the subscription's arguments; with its subscriber's principal it makes a
group's key. For a batch of committed timeline lines a topic names the runs it must
re-read, then reads them with the same use cases the queries answer from (the inbox,
work and board queries of ``service/slots/views.py``, ``visible_slot``, ``run_detail``):
one read per group per batch, never a second copy of who may see what. A row that was in
the group's view and is no longer returned is told removed; one never seen is not told.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.slots import filters
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.service.slots import views
from taskflow.store.live import live

INBOX, WORK, BOARD, SLOT, RUN = "inbox", "work", "board", "slot", "run"


@dataclass(frozen=True)
class Topic:
    """A subscription's arguments: its kind and what narrows it."""

    kind: str
    #: The inbox's or work list's filter (inbox, work).
    filter: filters.SlotFilter = field(default_factory=filters.SlotFilter)
    #: The board's workflow and lane (board); the slot's or run's id (slot, run).
    workflow: str | None = None
    lane: str | None = None
    id: str | None = None

    def runs_touched(self, lines: Iterable[live.Line], view: dict[str, str]) -> set[str]:
        """The runs of ``lines`` this topic must re-read (none: the batch is not its)."""
        if self.kind == SLOT:
            return {ln.run for ln in lines if ln.slot == self.id or ln.run in view.values()}
        if self.kind == RUN:
            return {ln.run for ln in lines if ln.run == self.id}
        wanted = self.workflow if self.kind == BOARD else self.filter.workflow
        return {ln.run for ln in lines if wanted is None or ln.workflow == wanted}

    async def start(self, services: Services, actor: Principal) -> dict[str, str]:
        """The rows the subscriber may see now (key -> run id): the group's first view.
        NOT_FOUND or FORBIDDEN refuses the subscription, as the query would."""
        if self.kind in (INBOX, WORK):
            return await views.slot_ids(services, actor, self.filter, work=self.kind == WORK)
        if self.kind == BOARD:
            return {k: run for k, (run, _) in (await self.read(services, actor, None)).items()}
        found = await self.read(services, actor, None)
        if not found:
            raise errors.NotFound(f"No {self.kind} has the id {self.id!r}.")
        return {k: run for k, (run, _) in found.items()}

    async def read(
        self,
        services: Services,
        actor: Principal,
        runs: Sequence[str] | None,
        loaded: access.Loaded | None = None,
    ) -> dict[str, tuple[str, Any]]:
        """Key -> (run id, row) of what the subscriber sees now among ``runs`` (None: all).
        ``loaded``: the batch's runs as read for another subscriber (a slot's or run's
        watchers share one read; each is checked on their own powers)."""
        if self.kind in (INBOX, WORK):
            return await _slots(services, actor, replace(self.filter, runs=runs), self.kind)
        if self.kind == BOARD:
            return await _cards(services, actor, self, runs)
        assert self.id is not None
        request = access.RequestAccess(services, actor, loaded)
        try:
            if self.kind == RUN:
                run_row, _ = await views.run_detail(services, actor, self.id, request)
                return {self.id: (self.id, run_row)}
            if runs is None:
                runs = [(await views.visible_slot(services, actor, self.id)).run_id]
            for run_id in runs:
                # The run's read rule covers whoever is involved in the slot.
                run_row, slots = await views.run_detail(services, actor, run_id, request)
                for slot in slots:
                    if slot.id == self.id:
                        return {slot.id: (run_id, (slot, run_row.head))}
        except errors.NotFound:
            pass
        return {}


async def _slots(
    services: Services, actor: Principal, f: filters.SlotFilter, kind: str
) -> dict[str, tuple[str, Any]]:
    found: dict[str, tuple[str, Any]] = {}
    after = None
    while True:
        if kind == INBOX:
            page, more = await views.inbox(services, actor, f, first=views.MAX_FIRST, after=after)
        else:
            page, _, more = await views.work(services, actor, f, first=views.MAX_FIRST, after=after)
        found.update((r.slot.id, (r.slot.run_id, r)) for r in page)
        if not more or not page:
            return found
        after = page[-1].cursor


async def _cards(
    services: Services, actor: Principal, topic: Topic, runs: Sequence[str] | None
) -> dict[str, tuple[str, Any]]:
    assert topic.workflow is not None
    found: dict[str, tuple[str, Any]] = {}
    after = None
    while True:
        cards, _, more = await views.board(
            services,
            actor,
            topic.workflow,
            first=views.MAX_FIRST,
            after=after,
            include_ended=False,
            runs=runs,
        )
        for card in cards:
            if topic.lane is None or card.run.view.state == topic.lane:
                found[card.run.view.id] = (card.run.view.id, card)
        if not more or not cards:
            return found
        after = (cards[-1].run.started_at, cards[-1].run.view.id)
