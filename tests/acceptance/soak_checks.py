"""What the soak test checks in the database afterwards: slots, timers and clocks agree.

Each check returns the rows that break it (an empty list: it holds) and is
one SQL statement, or a replay of the timeline in Python where SQL would be
harder to read.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import asyncpg

#: The timeline lines a firing writes, each naming its timer's key and due instant.
FIRING_KINDS = ("reminder.fired", "timeout.fired", "clock.breached", "clock.at_risk")


async def slots_against_timeline(conn: asyncpg.Connection[Any]) -> list[str]:
    """Each slot's status and holder are what replaying its timeline's moves gives."""
    slots = await conn.fetch("SELECT id, name, status, holder, held_since FROM slot")
    lines = await conn.fetch(
        "SELECT slot, kind, actor, details, at FROM audit_event "
        "WHERE slot IS NOT NULL AND kind LIKE 'slot.%' ORDER BY id"
    )
    replay: dict[Any, tuple[str | None, str | None, datetime | None]] = {}
    for line in lines:
        status, holder, since = replay.get(line["slot"], (None, None, None))
        details = _json(line["details"])
        kind = line["kind"]
        if kind == "slot.opened":
            status, holder, since = "open", None, None
        elif kind == "slot.pending":
            status, holder, since = "pending", None, None
        elif kind == "slot.claimed":
            status, holder, since = "claimed", line["actor"], line["at"]
        elif kind == "slot.assigned":
            status, holder, since = "claimed", details.get("to"), line["at"]
        elif kind == "slot.released":
            status, holder, since = "open", None, None
        elif kind == "slot.reassigned":
            held = bool(details.get("held"))
            status = "claimed" if held else "open"
            holder, since = (details.get("to"), line["at"]) if held else (None, None)
        elif kind == "slot.satisfied":
            status, since = "satisfied", None
        elif kind in ("slot.cancelled", "slot.disarmed"):
            status, since = "cancelled", None
        replay[line["slot"]] = (status, holder, since)
    broken = []
    for slot in slots:
        status, holder, since = replay.get(slot["id"], (None, None, None))
        if status != slot["status"]:
            broken.append(f"slot {slot['id']}: status {slot['status']}, timeline says {status}")
        elif status == "claimed" and (holder, since) != (slot["holder"], slot["held_since"]):
            broken.append(
                f"slot {slot['id']}: held by {slot['holder']} since {slot['held_since']}, "
                f"timeline says {holder} since {since}"
            )
        elif status == "open" and slot["holder"] is not None:
            broken.append(f"slot {slot['id']}: open but held by {slot['holder']}")
    return broken


async def timers_fired_once(conn: asyncpg.Connection[Any], due_before: datetime) -> list[str]:
    """No firing twice (one line per key and due instant), each row's count is its lines,
    every timer due before ``due_before`` fired (none armed, none dead)."""
    broken = [
        f"timer {r['key']} fired {r['n']} times for its due instant {r['due']}"
        for r in await conn.fetch(
            "SELECT details->>'key' AS key, details->>'due_at' AS due, count(*) AS n "
            "FROM audit_event WHERE kind = ANY($1::text[]) GROUP BY 1, 2 HAVING count(*) > 1",
            list(FIRING_KINDS),
        )
    ]
    broken += [
        f"timer {r['key']}: fired {r['fired']}, timeline has {r['lines']} firings"
        for r in await conn.fetch(
            """
            SELECT t.key, t.fired, count(a.id) AS lines FROM timer t
            LEFT JOIN audit_event a ON a.run = t.run AND a.kind = ANY($1::text[])
                                   AND a.details->>'key' = t.key
            GROUP BY t.key, t.fired HAVING t.fired <> count(a.id)
            """,
            list(FIRING_KINDS),
        )
    ]
    broken += [
        f"timer {r['key']} ({r['status']}) due at {r['due_at']} did not fire"
        for r in await conn.fetch(
            "SELECT key, status, due_at FROM timer "
            "WHERE (status = 'armed' AND due_at < $1) OR status = 'dead'",
            due_before,
        )
    ]
    return broken


async def clocks_consistent(conn: asyncpg.Connection[Any]) -> list[str]:
    """Each clock ledger: met and breached after it started, met exactly when its timeline
    says so, breached at most once, and the slot's copy of its report clock equal to it."""
    broken = [
        f"clock {r['slot']}/{r['milestone']}: started {r['started_at']}, met {r['met_at']}, "
        f"breached {r['breached_at']}; its slot's timeline: {await _lines(conn, r['slot'])}"
        for r in await conn.fetch(
            "SELECT slot, milestone, started_at, met_at, breached_at FROM sla_clock "
            "WHERE met_at < started_at OR breached_at < started_at "
            "OR (breached_at IS NOT NULL AND due_at IS NULL)"
        )
    ]
    broken += [
        f"clock {r['slot']}/{r['milestone']}: met_at {r['met_at']}, {r['lines']} clock.met lines"
        for r in await conn.fetch(
            """
            SELECT k.slot, k.milestone, k.met_at, count(a.id) AS lines FROM sla_clock k
            LEFT JOIN audit_event a
                   ON a.run = k.run AND a.slot = k.slot AND a.kind = 'clock.met'
                  AND a.details->>'milestone' = k.milestone
            GROUP BY k.slot, k.milestone, k.met_at
            HAVING count(a.id) > 1 OR (k.met_at IS NULL) <> (count(a.id) = 0)
            """
        )
    ]
    broken += [
        f"clock {r['slot']}/{r['milestone']} breached {r['n']} times"
        for r in await conn.fetch(
            "SELECT slot, details->>'milestone' AS milestone, count(*) AS n FROM audit_event "
            "WHERE kind = 'clock.breached' GROUP BY 1, 2 HAVING count(*) > 1"
        )
    ]
    broken += [
        f"slot {r['id']}: its copy of the {r['sla_milestone']} clock differs from the ledger"
        for r in await conn.fetch(
            """
            SELECT s.id, s.sla_milestone FROM slot s
            JOIN sla_clock k ON k.slot = s.id AND k.milestone = s.sla_milestone
            WHERE s.sla_met_at IS DISTINCT FROM k.met_at
               OR s.sla_due_at IS DISTINCT FROM k.due_at
               OR s.sla_breached_at IS DISTINCT FROM k.breached_at
            """
        )
    ]
    return broken


async def _tally(conn: asyncpg.Connection[Any], table: str, *columns: str) -> dict[str, int]:
    """How many rows of ``table`` there are per value of ``columns`` (joined with "/")."""
    listed = ", ".join(columns)
    rows = await conn.fetch(f"SELECT {listed}, count(*) AS n FROM {table} GROUP BY {listed}")
    return {"/".join(str(r[c]) for c in columns): r["n"] for r in sorted(rows, key=tuple)}


async def counts(conn: asyncpg.Connection[Any]) -> dict[str, Any]:
    """What the load left behind, for the printout."""
    return {
        "runs": await _tally(conn, "run", "state", "status"),
        "slots": await _tally(conn, "slot", "status"),
        "timers": await _tally(conn, "timer", "kind", "status"),
        "firings": {
            r["kind"]: r["n"]
            for r in await conn.fetch(
                "SELECT kind, count(*) AS n FROM audit_event WHERE kind = ANY($1::text[]) "
                "GROUP BY 1",
                list(FIRING_KINDS),
            )
        },
        "clocks": await conn.fetchval("SELECT count(*) FROM sla_clock"),
        "timeline_lines": await conn.fetchval("SELECT count(*) FROM audit_event"),
    }


async def _lines(conn: asyncpg.Connection[Any], slot: Any) -> list[str]:
    found = await conn.fetch(
        "SELECT id, kind, actor, at FROM audit_event WHERE slot = $1 ORDER BY id LIMIT 8", slot
    )
    return [f"#{r['id']} {r['kind']} by {r['actor']} at {r['at'].time()}" for r in found]


def _json(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        loaded: dict[str, Any] = json.loads(value)
        return loaded
    return dict(value or {})
