"""The worker's automation lane: each published automation decides, once, on each timeline
line its trigger listens to, and acts in the same transaction as it records the decision.

A line is an event to every published automation of its run's workflow whose trigger it
maps to (``core/automations/timeline.py``) and that was published by its instant. Such
lines are queued as they are written (``automation_line``, a trigger on the timeline), so
the lane's position on the timeline is the queue: a pass takes a batch of queued lines
(SKIP LOCKED) with every automation deciding on each, and evaluates them all in one go.
Lines on which no automation acts whatever it remembers (a filter or condition that does
not hold: memory only ever adds skips) leave the queue in that one transaction and write
nothing else. Each other line is decided in a transaction of its own: the line locked,
each automation that may act locked in id order, asked whether it already decided (the
unique ``automation_act`` row), decided (``core/automations/decide.py``: trigger filters,
depth, conditions, enrollment) and, when acting, its author's grant re-checked before each
action, done as ``automation:<id>`` with the author's powers. The line leaves the queue
with those decisions, so a killed worker rolled back both and the line is taken again:
each action happens exactly once. Every line the actions wrote is stamped with the
automation, its version, the enrolling line and the depth (the enrolling line's + 1), which
the loop guard reads.

An automation whose author may no longer manage the workflow, that met a loop or whose
action failed is flagged (``attention``): it stops acting until it is published again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.automations import decide as rules_decide
from taskflow.core.automations import document as rules
from taskflow.core.automations import screen, timeline
from taskflow.service.automations import actions, waiting
from taskflow.service.common import outage
from taskflow.service.common import retry as retries
from taskflow.service.common.container import Services
from taskflow.store.automations import automations as store
from taskflow.store.common import db

log = logging.getLogger("taskflow.automations")

#: Queued lines taken per pass.
BATCH = 1000
#: Lines evaluated between two yields to the event loop (each line is evaluated for every
#: automation of its workflow: a hundred decisions a line must not hold the timers back).
YIELD_EVERY = 20


async def run_due(services: Services, most: int = BATCH) -> int:
    """Decide on up to ``most`` queued lines for every automation listening to each, then
    do up to ``most`` actions waiting after a delay that ended; how many of both were taken."""
    async with services.db.transaction() as conn:
        lines = await store.queued_lines(conn, most)
        workflows = sorted({line["workflow"] for line in lines if line["workflow"]})
        listening = _Listening(await store.listening(conn, workflows))
        acting: list[tuple[Mapping[str, Any], list[str]]] = []
        done: list[int] = []
        for n, line in enumerate(lines, 1):
            may = listening.may_act(line)
            if may:
                acting.append((line, may))
            else:
                done.append(int(line["line_id"]))
            if n % YIELD_EVERY == 0:
                await asyncio.sleep(0)  # the timers share this process's loop
        await store.lines_done(conn, done)
    for line, may in acting:
        try:
            await decide_line(services, line, may)
        except errors.Busy:
            continue  # rolled back whole; a later pass takes the line again
    return len(lines) + await waiting.run_due(services, most)


class _Listening:
    """A pass's published automations by (workflow, trigger), each document read once and
    filed in a :class:`screen.Screen` (a pass evaluates the same hundred automations on
    every line)."""

    def __init__(self, rows: list[Mapping[str, Any]]) -> None:
        grouped: dict[tuple[str, str], list[tuple[_Listener, rules.Automation | None]]] = {}
        for row in rows:
            got = rules.read(row["document"])
            rule = got if isinstance(got, rules.Automation) else None
            listener = _Listener(row["id"], row["published_at"])
            grouped.setdefault((row["workflow"], row["trigger"]), []).append((listener, rule))
        self.of = {key: screen.Screen(found) for key, found in grouped.items()}

    def may_act(self, line: Mapping[str, Any]) -> list[str]:
        """The automations that may act (or must be flagged) on ``line``: all those listening,
        published by its instant, but the ones that skip it whatever they remember."""
        event = timeline.event_of_line(line) if line["workflow"] is not None else None
        found = self.of.get((line["workflow"], event.kind)) if event is not None else None
        if event is None or found is None:
            return []  # gone (its subject's runs deleted), or no longer listened to
        return [
            listener.id
            for listener in found.candidates(event)
            if listener.published_at is not None and listener.published_at <= event.at
        ]


@dataclasses.dataclass(frozen=True)
class _Listener:
    id: str
    published_at: datetime | None


@retries.retried("act on an event")
async def decide_line(
    services: Services, line: Mapping[str, Any], automation_ids: list[str]
) -> list[str]:
    """Decide (and act) on one queued line for each of ``automation_ids`` (in id order, the
    lock order), and take it off the queue; the outcomes (none: another worker has the line,
    or it was decided)."""
    now = services.clock.now()
    event = timeline.event_of_line(line)
    assert event is not None  # may_act passed on only lines that are events
    async with services.db.transaction() as conn:
        if not await store.take_line(conn, int(line["line_id"])):
            return []
        outcomes = [await _decide(services, conn, a, event, now) for a in sorted(automation_ids)]
        await store.lines_done(conn, [int(line["line_id"])])
        return outcomes


async def _decide(
    services: Services,
    conn: db.Connection,
    automation_id: str,
    event: rules_decide.Event,
    now: datetime,
) -> str:
    """One automation's decision on ``event`` in the line's transaction: the outcome
    recorded (``done``: it was decided before, ``gone``: the automation no longer acts)."""
    key = f"line:{event.id}"
    row = await store.lock(conn, automation_id)
    if row is None or row.status != "published" or row.attention:
        return "gone"
    if await store.decided(conn, row.id, key):
        return "done"
    rule = rules.read(row.document)
    if not isinstance(rule, rules.Automation):  # saved valid; blocks may since have gone
        await store.flag(conn, row.id, "its document is no longer valid", now, event.run_id)
        return "gone"
    subject = event.subject_key or event.run_id
    seen = rules_decide.Enrollments()
    last = await store.last_enrolled(conn, row.id, subject)
    if last is not None:
        seen.last[subject] = last
    decision = rules_decide.decide(rule, event, seen)
    outcome = decision.outcome
    if outcome == "skip":
        return outcome  # a skip writes nothing: the line leaving the queue says it was seen
    if outcome == "loop":
        await store.flag(conn, row.id, f"stopped a loop: {decision.reason}", now, event.run_id)
    else:
        # In a savepoint: a bug in an action must not hold the line's other automations
        # (or every later line) back, so its work is undone and it is flagged.
        try:
            async with conn.transaction():
                outcome = await actions.do_all(services, conn, row, event, decision.actions)
        except (errors.Busy, *retries.LOST_RACE, *outage.DATABASE_DOWN):
            raise
        except Exception as exc:
            log.exception("automation %s failed on line %s", row.id, event.id)
            why = f"an action failed ({type(exc).__name__}); see the worker's log"
            await store.flag(conn, row.id, why, services.clock.now(), event.run_id)
            outcome = "failed"
    await store.act_once(conn, row.id, row.version, key, outcome, now, subject, event.at)
    return outcome
