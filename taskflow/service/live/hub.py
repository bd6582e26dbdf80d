"""The process's live hub: one LISTEN, batched reads, one query per group per batch.

Every statement that writes timeline lines announces their id range at commit
(``store/live``). The hub gathers the announcements for a few milliseconds, reads the
lines in one query, and for each *group* (subscribers sharing a topic and a principal)
whose topic the lines touch, re-reads the touched runs once (``topics.Topic.read``) and
compares with the group's view: rows returned are changed, rows of the view not returned
are removed. Each subscriber's queue is bounded: one that is full is dropped (its
connection closes), so a client that never reads costs a bounded amount of memory.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Callable

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.service.live import live_metrics, rechecks, topics
from taskflow.service.live.subscribers import Change, Group, Subscription
from taskflow.service.live.watermark import Watermark
from taskflow.service.slots import views
from taskflow.store.live import live
from taskflow.store.workspaces import scope as workspace_scope

log = logging.getLogger("taskflow.live")

#: How long announcements are gathered into one batch (seconds).
BATCH_SECONDS = 0.02
#: Groups read at once per batch (each read holds a pooled connection).
READS_AT_ONCE = 4
#: Line ids remembered to skip a line announced twice (overlapping ranges).
SEEN_LINES = 20_000
#: Lines read back when the feed first starts, so that lines still being committed below
#: the newest are known as gaps (``watermark.py``) before the first cursor is handed out.
START_LOOKBACK = 1_000
#: While gaps are open, how often they are looked up without a notification (seconds).
GAP_RECHECK = 0.5


class Hub:
    """The live feed of one process (one per :class:`Services`)."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.groups: dict[tuple[str, str], Group] = {}
        #: Group keys by the id a line must name to touch them: a slot or run watcher under
        #: the slot or run it watches (a slot's run too), every list under "". A batch
        #: asks only these candidates, not every group (a thousand slot pages are open).
        self._by_id: dict[str, set[tuple[str, str]]] = collections.defaultdict(set)
        self.connections: collections.Counter[str] = collections.Counter()
        self.watermark: Watermark | None = None
        self._ranges: list[tuple[int, int]] = []
        self._heard_at: float | None = None
        self._wake = asyncio.Event()
        self._ready = asyncio.Event()
        self._seen: collections.OrderedDict[int, None] = collections.OrderedDict()
        self._task: asyncio.Task[None] | None = None
        #: The open sockets' tokens, re-checked together.
        self.rechecks = rechecks.Rechecks(services, self.refresh)

    @property
    def cursor(self) -> int:
        """The settled cursor (``watermark.py``): what a change read now carries."""
        return 0 if self.watermark is None else self.watermark.settled

    # connections -----------------------------------------------------------------------
    def connect(self, principal_id: str, cap: int) -> bool:
        """Count a connection of ``principal_id``; False when they hold ``cap`` already."""
        if self.connections[principal_id] >= cap:
            return False
        self.connections[principal_id] += 1
        live_metrics.CONNECTIONS.inc()
        return True

    def disconnect(self, principal_id: str) -> None:
        self.connections[principal_id] -= 1
        if self.connections[principal_id] <= 0:
            del self.connections[principal_id]
        live_metrics.CONNECTIONS.dec()

    async def refresh(self, actor: Principal) -> None:
        """The principal as re-read now. When their powers changed (roles, groups, grants)
        each of their groups is read whole again: what they may no longer see is told
        removed, what they now may is told changed."""
        for group in [g for g in self.groups.values() if g.actor.id == actor.id]:
            if group.actor == actor:
                continue
            group.actor = actor
            changes = await self._changes(group, None, self.cursor)
            for sub in list(group.subscribers):
                sub.offer(changes)

    # subscriptions ---------------------------------------------------------------------
    async def subscribe(
        self,
        topic: topics.Topic,
        actor: Principal,
        *,
        after: int | None,
        max_queued: int,
        window: int,
        dropped: Callable[[], None],
    ) -> Subscription:
        """A subscription to ``topic`` for ``actor``, listening before it returns; with
        ``after`` (a cursor) the changes since then come first. Refusals as the queries'."""
        await self._start()
        key = (actor.id, repr(topic))
        group = self.groups.get(key)
        if group is None:
            with workspace_scope.acting_in(actor.workspace):
                group = Group(topic, actor, await topic.start(self.services, actor))
            if key not in self.groups:
                for watched in _watched_ids(group):
                    self._by_id[watched].add(key)
            group = self.groups.setdefault(key, group)
        sub = Subscription(self.leave, group, max_queued, dropped, after)
        group.subscribers.add(sub)
        live_metrics.SUBSCRIPTIONS.labels(topic.kind).inc()
        if after is not None:
            try:
                sub.replayed(*await self._replay(group, after, window))
            except BaseException:
                sub.close()
                raise
        return sub

    def leave(self, sub: Subscription) -> None:
        group = sub.group
        if sub not in group.subscribers:
            return
        group.subscribers.discard(sub)
        live_metrics.SUBSCRIPTIONS.labels(group.topic.kind).dec()
        if not group.subscribers:
            key = (group.actor.id, repr(group.topic))
            if self.groups.get(key) is group:
                del self.groups[key]
                for watched in _watched_ids(group):
                    self._by_id[watched].discard(key)
                    if not self._by_id[watched]:
                        del self._by_id[watched]
        if not self.groups and self._task is not None:
            self._task.cancel()
            self._task = None
            self._ready.clear()

    async def _replay(
        self, group: Group, after: int, window: int
    ) -> tuple[list[Change], frozenset[int]]:
        """What changed since ``after`` as the group's principal sees it now, and the ids
        of the lines read for it (any process's cursor: the lines come from the database)."""
        async with self.services.db.connection() as conn:
            lines = (await live.lines_after(conn, after, window + 1)).lines
        if len(lines) > window:
            raise errors.ValidationError(
                f"The cursor {after} is older than the last {window} changes this server "
                "keeps for resuming: read the list again, then subscribe without `after`.",
                code="CURSOR_EXPIRED",
                field="after",
            )
        if not lines:
            return [], frozenset()
        # Not simply the newest line read: one below it may still be committing
        # (watermark.py). Safe: the feed's settled cursor, or the end of the run of
        # consecutive ids the replay read from ``after`` on (each of those is committed).
        cursor = after
        for line in lines:
            if line.id != cursor + 1:
                break
            cursor = line.id
        cursor = max(self.cursor, cursor)
        changed = await self._changes(group, lines, cursor)
        told = {c.key for c in changed}
        # Rows gone while the subscriber was away: told removed when its powers still let it
        # see the row (the one read rule), so nothing of others' work is named.
        by_run = group.topic.kind in (topics.BOARD, topics.RUN)
        runs = {(ln.run if by_run else ln.slot): ln.run for ln in lines}
        for key in sorted(k for k in runs if k and k not in told):
            if await self._may_see(group, key):
                changed.append(Change(cursor, key, None, runs[key]))
        return changed, frozenset(ln.id for ln in lines)

    async def _may_see(self, group: Group, key: str) -> bool:
        kind = group.topic.kind
        if kind == topics.RUN and key != group.topic.id:
            return False
        if kind == topics.SLOT and key != group.topic.id:
            return False
        try:
            if kind in (topics.BOARD, topics.RUN):
                await views.run_detail(self.services, group.actor, key)
            else:
                await views.visible_slot(self.services, group.actor, key)
        except errors.NotFound:
            return False
        return True

    # the loop ------------------------------------------------------------------------
    async def _start(self) -> None:
        if self._task is None or self._task.done():
            self._ready.clear()
            # The feed reads every workspace's lines; each group reads in its actor's.
            with workspace_scope.every():
                self._task = asyncio.create_task(self._run(), name="taskflow-live")
        await self._ready.wait()

    def _heard(self, payload: str) -> None:
        found = live.parse_range(payload)
        if found is not None:
            self._ranges.append(found)
            if self._heard_at is None:
                self._heard_at = asyncio.get_running_loop().time()

    async def _run(self) -> None:
        # Subscriptions have no polling to fall back on: they listen under either scheduler
        # (on TASKFLOW_DATABASE_LISTEN_URL behind a pooler).
        listener = self.services.db.listener(live.CHANNEL, self._wake.set, self._heard, listen=True)
        try:
            while True:
                try:
                    if not listener.is_open():
                        await listener.listen()
                        await self._catch_up()
                        self._ready.set()
                    # Open gaps are looked up again even when nothing is announced.
                    wait = GAP_RECHECK if self.watermark and self.watermark.pending else None
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), wait)
                    self._wake.clear()
                    await asyncio.sleep(BATCH_SECONDS)
                    await self._batch()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.warning("live feed: the batch failed; listening again", exc_info=True)
                    await listener.close()
                    await asyncio.sleep(1)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(listener.close())

    async def _catch_up(self) -> None:
        """After (re)listening: what committed while not listening is read as one batch
        (on the first start, the last few lines: to know the gaps below the newest)."""
        async with self.services.db.connection() as conn:
            if self.watermark is None:
                last = await live.last_line(conn)
                self.watermark = Watermark(max(0, last - START_LOOKBACK))
            since = self.watermark.settled
            read = await live.lines_after(conn, since, SEEN_LINES)
        newest = read.lines[-1].id if read.lines else 0
        searched = [(since + 1, max(self.watermark.read_to, newest))]
        await self._fan_out(read, searched, asyncio.get_running_loop().time())

    async def _batch(self) -> None:
        assert self.watermark is not None
        ranges, self._ranges = self._ranges, []
        heard_at, self._heard_at = self._heard_at, None
        gaps = self.watermark.lookups()
        if not ranges and not gaps:
            return
        async with self.services.db.connection() as conn:
            read = await live.lines_in(conn, ranges + gaps)
        await self._fan_out(read, gaps, heard_at or asyncio.get_running_loop().time())

    async def _fan_out(
        self, read: live.Read, searched: list[tuple[int, int]], heard_at: float
    ) -> None:
        assert self.watermark is not None
        lines = read.lines
        given_up = self.watermark.read((ln.id for ln in lines), searched, read.xmin, read.xmax)
        if given_up:
            log.warning("live feed: %d open gaps given up (a resume may miss them)", given_up)
        fresh = [ln for ln in lines if ln.id not in self._seen]
        for ln in fresh:
            self._seen[ln.id] = None
        while len(self._seen) > SEEN_LINES:
            self._seen.popitem(last=False)
        if not fresh:
            return
        gate = asyncio.Semaphore(READS_AT_ONCE)
        loaded: access.Loaded = {}
        # Only the groups this batch touches get a read: a thousand idle groups would each
        # cost a task and a turn at the gate before learning they have nothing to send.
        touched = self._touched(fresh)
        # The runs that slot and run watchers will read: loaded once for all of them.
        by_id = [g for g in touched if g.topic.kind in (topics.SLOT, topics.RUN)]
        await access.preload(
            self.services,
            loaded,
            sorted({r for g in by_id for r in g.topic.runs_touched(fresh, g.view)}),
        )

        async def one(group: Group) -> None:
            async with gate:
                changes = await self._changes(group, fresh, self.cursor, loaded)
            if changes:
                for sub in list(group.subscribers):
                    sub.offer(changes, fresh)
                live_metrics.LAG.observe(asyncio.get_running_loop().time() - heard_at)

        await asyncio.gather(*(one(g) for g in touched if g.subscribers))

    def _touched(self, lines: list[live.Line]) -> list[Group]:
        """The groups ``lines`` touch, found through the ids the lines name."""
        ids = {"", *(ln.run for ln in lines), *(ln.slot for ln in lines if ln.slot)}
        keys = {k for i in ids for k in self._by_id.get(i, ())}
        groups = (self.groups.get(k) for k in keys)
        return [g for g in groups if g is not None and g.topic.runs_touched(lines, g.view)]

    async def _changes(
        self,
        group: Group,
        lines: list[live.Line] | None,
        cursor: int,
        loaded: access.Loaded | None = None,
    ) -> list[Change]:
        """What ``lines`` (None: anything) changed in the group's view, the view updated
        (``loaded``: runs this batch read already, shared across groups)."""
        runs = None if lines is None else group.topic.runs_touched(lines, group.view)
        if runs is not None and not runs:
            return []
        try:
            with workspace_scope.acting_in(group.actor.workspace):
                now = await group.topic.read(
                    self.services, group.actor, None if runs is None else sorted(runs), loaded
                )
        except (errors.Forbidden, errors.NotFound):
            now = {}  # the subscriber lost the power to read this list: all of it goes
        changes = [Change(cursor, key, row, run) for key, (run, row) in now.items()]
        for key, (run, _) in now.items():
            group.view[key] = run
        for key, run in list(group.view.items()):
            if (runs is None or run in runs) and key not in now:
                del group.view[key]
                changes.append(Change(cursor, key, None, run))
        return changes


def _watched_ids(group: Group) -> set[str]:
    """The ids under which ``group`` is a candidate for a batch (``Hub._by_id``)."""
    if group.topic.kind in (topics.SLOT, topics.RUN):
        assert group.topic.id is not None
        return {group.topic.id, *group.view.values()}
    return {""}


_HUBS: dict[int, Hub] = {}


def hub_for(services: Services) -> Hub:
    """The hub of this process's ``services`` (made on first use)."""
    found = _HUBS.get(id(services))
    if found is None or found.services is not services:
        found = _HUBS[id(services)] = Hub(services)
    return found
