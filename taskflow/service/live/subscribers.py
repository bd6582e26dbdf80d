"""What the live hub hands its subscribers: changes, and each subscriber's bounded queue.

A *group* is the subscribers of one topic under one principal (``hub.py`` reads once per
batch for all of them); each :class:`Subscription` is one socket's stream, with its own
bounded queue and, when it resumed from a cursor, the seam between its replay and the
live batches (docs/live.md, "Resume").
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from taskflow.core.access.principals import Principal
from taskflow.service.live import live_metrics, topics
from taskflow.store.live import live


@dataclass(frozen=True)
class Change:
    """One row as the subscriber now sees it (``row`` None: no longer theirs to see).
    ``cursor``: the feed's settled line id when it was read (every line at or below it
    was read), the same in every process; ``run``: the row's run."""

    cursor: int
    key: str
    row: Any | None
    run: str


@dataclass(frozen=True)
class Seam:
    """A resumed subscriber's replay: the keys it told and the lines it read. A live change
    of a told key whose run's lines in the batch were all among those lines is older than
    (or the same as) what the replay told: it is not told again."""

    told: frozenset[str]
    lines: frozenset[int]
    #: Once the feed's settled cursor reaches this, no batch can hold a replayed line.
    through: int

    def repeats(self, change: Change, lines: Iterable[live.Line]) -> bool:
        if change.key not in self.told:
            return False
        ids = [ln.id for ln in lines if ln.run == change.run]
        return bool(ids) and all(i in self.lines for i in ids)


class Subscription:
    """One subscriber's bounded queue of changes, iterated by its socket."""

    def __init__(
        self,
        leave: Callable[[Subscription], None],
        group: Group,
        max_queued: int,
        dropped: Callable[[], None],
        after: int | None = None,
    ):
        self._leave, self.group = leave, group
        self._queue: asyncio.Queue[Change | None] = asyncio.Queue()
        self._max = max_queued
        self._dropped = dropped
        self.overflowed = False
        #: The cursor resumed from: no change goes out with an older one.
        self._floor = after or 0
        #: While the replay is read, live batches wait here (changes, their lines).
        self._held: list[tuple[list[Change], list[live.Line] | None]] | None = (
            None if after is None else []
        )
        self._seam: Seam | None = None

    def offer(self, changes: Iterable[Change], lines: list[live.Line] | None = None) -> None:
        """Queue ``changes`` (read for ``lines``; None: a whole re-read); past the bound
        the subscriber is dropped, not buffered."""
        if self._held is not None:
            self._held.append((list(changes), lines))
            return
        seam = self._seam
        if seam is not None and lines is not None:
            changes = [c for c in changes if not seam.repeats(c, lines)]
            if any(c.cursor >= seam.through for c in changes):
                self._seam = None
        self._put(changes)

    def replayed(self, changes: list[Change], lines: frozenset[int]) -> None:
        """The replay's ``changes`` (read from ``lines``) go out, then the live batches
        held meanwhile, without what the replay already told."""
        held, self._held = self._held or [], None
        # Every line up to the replay's cursor is in what it told: no older cursor after.
        self._floor = max([self._floor, *(c.cursor for c in changes)])
        self._put(changes)
        if lines:
            self._seam = Seam(frozenset(c.key for c in changes), lines, max(lines))
        for batch, batch_lines in held:
            self.offer(batch, batch_lines)

    def _put(self, changes: Iterable[Change]) -> None:
        if self.overflowed:
            return
        for change in changes:
            if change.cursor < self._floor:
                change = replace(change, cursor=self._floor)
            if self._queue.qsize() >= self._max:
                self.overflowed = True
                live_metrics.DROPPED.labels("slow").inc()
                self._dropped()
                return
            self._queue.put_nowait(change)

    async def changes(self) -> AsyncIterator[Change]:
        """The changes as they come, until the subscription ends."""
        while True:
            change = await self._queue.get()
            if change is None:
                return
            live_metrics.MESSAGES.labels(self.group.topic.kind).inc()
            yield change

    def close(self) -> None:
        """End the stream and leave the hub."""
        self._queue.put_nowait(None)
        self._leave(self)


@dataclass
class Group:
    """Subscribers of one topic under one principal: one read per batch for all of them."""

    topic: topics.Topic
    actor: Principal
    view: dict[str, str] = field(default_factory=dict)
    subscribers: set[Subscription] = field(default_factory=set)
