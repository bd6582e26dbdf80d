"""claim-next: take the most urgent open slot a principal may take, in one statement when it can.

Two statements, one choice of slot (``FOR UPDATE SKIP LOCKED`` on the open
slots in urgency order, so concurrent claimers never wait on, or get, the
same row). Claim-next locks no run (docs/architecture.md, "Lock order"): it
holds one slot, then that slot's clocks and timers, which every other writer
takes only after the slot; its timeline line's key-share lock on the run is
compatible with the ``FOR NO KEY UPDATE`` run lock of every writer.

- :func:`claim_next_plain` claims *and* carries out the claim's deadlines in
  one autocommitted statement when the chosen slot is plain (see
  ``core/claim_facts.py``): its ``assigned`` clock met, that clock's breach
  timer and reminders cancelled, its nearest due instant moved to its other
  running clocks, its ``slot.claimed`` and ``clock.met`` lines written. What
  it writes is what the general path (the unit of work's planner,
  ``core/unit_of_work.plan``) writes: ``tests/integration/test_claim_paths.py``
  compares the two on every situation the statement takes. For a slot that is
  not plain it claims nothing and says so.
- :func:`claim_next` claims and returns the slot with its run, clocks and timers
  so that the service's general path plans the deadlines with the unit of work
  and writes them in the same transaction (``service/deadlines.after_slot_move``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.core import claim_facts
from taskflow.core.runs.filters import SlotFilter
from taskflow.core.runs.model import SlotView
from taskflow.store import candidacy, db, risk_sql
from taskflow.store import deadlines as deadline_rows
from taskflow.store.business_sql import real_us
from taskflow.store.queries import URGENCY, context_of, filter_sql, with_context
from taskflow.store.runs import SLOT_COLUMNS, RunRow, run_columns, run_from, slot_from

#: The prefix of the run's own columns beside the slot's of the same names.
_RUN = "r_"
_SLOT_OF_C = ", ".join(f"c.{name.strip()}" for name in SLOT_COLUMNS.split(","))

#: A claim's move folded onto the slot (``core/runs/holding.py``): the first pickup, and the
#: open hold it closes (an escalation may have reopened a held slot) added to the held time.
_HELD = f"""picked_at = coalesce(s.picked_at, $3),
                              held_us = s.held_us
                                  + coalesce(greatest(0, {real_us("s.held_since", "$3")}), 0),
                              held_since = $3"""

#: True when clock ``k`` runs (no pause, or its last pause has ended).
_RUNNING = risk_sql.not_paused("k.pauses")


def _iso(instant: str) -> str:
    """SQL for ``instant`` as Python's ``isoformat()`` of it in UTC (microseconds when any)."""
    return (
        f"to_char({instant} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS') "
        f"|| CASE WHEN extract(microseconds FROM {instant})::bigint % 1000000 = 0 THEN '' "
        f"ELSE to_char({instant} AT TIME ZONE 'UTC', '.US') END || '+00:00'"
    )


def _choice(filters: str) -> str:
    """The CTE ``next``: the most urgent open slot principal $1 (keys $2) may take by the
    slot's whole candidate rule, locked, with the claim's instant ``at``; ``filters`` are
    :func:`queries.filter_sql`'s conditions. Everything after it writes ``at`` (see
    :func:`_at`), never ``$3`` itself."""
    return f"""next AS (
            SELECT sl.id, sl.run, sl.workflow, sl.state, sl.name,
                   -- The claim's instant: never before the slot's last change (its
                   -- opening, its clocks' start), which a writer may have committed
                   -- after this statement's caller read the clock.
                   greatest($3::timestamptz, sl.updated_at) AS at
            FROM slot sl
            WHERE sl.status = 'open' AND {candidacy.admits_sql("sl", "$2::text[]")}
              {filters}
            ORDER BY {URGENCY}
            LIMIT 1
            FOR UPDATE SKIP LOCKED
        )"""


def _at(sql: str) -> str:
    """``sql`` (what follows the ``next`` CTE) with the caller's instant ``$3`` replaced by the
    claim's own (``next.at``): claim-next reads the clock before it takes its slot, so a slot
    opened meanwhile would otherwise be claimed, and its clock met, before it opened."""
    return re.sub(r"\$3\b", "(SELECT at FROM next)", sql)


def _text_array(values: Sequence[str]) -> str:
    """A SQL literal of a text array (the facts are constant per catalog: written into the
    statement, its text stays the same call after call and its prepared plan is reused)."""
    quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"ARRAY[{quoted}]::text[]" if values else "'{}'::text[]"


@dataclass(frozen=True)
class PlainClaim:
    """What :func:`claim_next_plain` did: the slot it claimed, or the one it left (not plain)."""

    candidate: str
    slot: SlotView | None
    #: The claimed slot's run as the statement read it (the answer needs no further read).
    run: RunRow | None = None


async def claim_next_plain(
    conn: db.Connection,
    *,
    principal_id: str,
    keys: Sequence[str],
    f: SlotFilter,
    now: datetime,
    facts: claim_facts.ClaimFacts,
) -> PlainClaim | None:
    """Claim the most urgent open slot with its deadlines if it is plain; None if none is open.

    Run it outside a transaction: it is one statement, atomic on its own.
    """
    sql, args = claim_next_plain_statement(principal_id, keys, f, now, facts)
    row = await conn.fetchrow(sql, *args)
    if row is None:
        return None
    if not row["plain"]:
        return PlainClaim(str(row["candidate"]), None)
    return PlainClaim(str(row["candidate"]), slot_from(row), run_from(row, _RUN))


def claim_next_plain_statement(
    principal_id: str,
    keys: Sequence[str],
    f: SlotFilter,
    now: datetime,
    facts: claim_facts.ClaimFacts,
) -> tuple[str, list[Any]]:
    """The statement of :func:`claim_next_plain` and its arguments."""
    args: list[Any] = [principal_id, list(keys), now]
    return _plain_sql(filter_sql(f, args), facts), args


@functools.lru_cache(maxsize=64)
def _plain_sql(filters: str, facts: claim_facts.ClaimFacts) -> str:
    due = _iso("c.assigned_due")
    return f"WITH {_choice(filters)}, " + _at(f"""plan AS (
            SELECT n.id, concat_ws(' ', n.workflow, r.definition_version, n.state, n.name) AS decl,
                   k.id AS assigned_id, k.met_at AS assigned_met, k.due_at AS assigned_due,
                   (k.id IS NULL OR k.met_at IS NOT NULL OR {_RUNNING}) AS running
            FROM next n JOIN run r ON r.id = n.run
            LEFT JOIN sla_clock k ON k.slot = n.id AND k.milestone = 'assigned'
        ), plain AS (
            SELECT p.* FROM plan p
            WHERE p.running
              -- A slot whose declaration has milestones but whose clocks never started
              -- has them started by the general path.
              AND (p.assigned_id IS NOT NULL OR p.decl <> ALL({_text_array(facts.declaring)})
                   OR EXISTS (SELECT 1 FROM sla_clock a WHERE a.slot = p.id))
        ), claimed AS (
            UPDATE slot s SET status = 'claimed', holder = $1, claimed_at = $3,
                              version = s.version + 1, updated_at = $3, {_HELD},
                              -- The slot's copy of its report clock (store/report_kept.py)
                              -- when that is the assigned one (no finished clock).
                              sla_met_at = CASE WHEN s.sla_milestone = 'assigned'
                                                     AND p.assigned_met IS NULL
                                                THEN $3 ELSE s.sla_met_at END,
                              due_at = (SELECT min(k.due_at) FROM sla_clock k
                                        WHERE k.slot = s.id AND k.milestone <> 'assigned'
                                          AND k.met_at IS NULL AND {_RUNNING})
            FROM plain p WHERE s.id = p.id
            RETURNING s.*, p.decl, p.assigned_id, p.assigned_met, p.assigned_due
        ), met AS (
            UPDATE sla_clock k SET met_at = $3, updated_at = $3
            FROM claimed c WHERE k.id = c.assigned_id AND c.assigned_met IS NULL
        ), cancelled AS (
            UPDATE timer t SET status = 'cancelled', updated_at = $3
            FROM claimed c
            WHERE t.slot = c.id AND t.status = 'armed'
              AND ((t.kind = 'breach' AND t.part = 'assigned')
                   OR (t.kind = 'reminder'
                       AND c.decl || ' ' || t.part = ANY({_text_array(facts.assigned_reminders)})))
        ), audited AS (
            INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
            SELECT c.run, c.id, l.kind, $1, l.reason, l.details, $3
            FROM claimed c CROSS JOIN LATERAL (VALUES
                (1, 'slot.claimed', 'claim next', jsonb_build_object('slot', c.name)),
                (2, 'clock.met', NULL,
                 CASE WHEN c.assigned_id IS NOT NULL AND c.assigned_met IS NULL
                 THEN jsonb_build_object('slot', c.name, 'milestone', 'assigned', 'due_at', {due},
                                         'breached', CASE WHEN c.assigned_due < $3 THEN {due} END)
                 END)
            ) AS l(n, kind, reason, details)
            WHERE l.details IS NOT NULL
            ORDER BY c.id, l.n
        )
        SELECT p.id AS candidate, c.id IS NOT NULL AS plain, {_SLOT_OF_C},
               {run_columns(_RUN)}
        FROM plan p LEFT JOIN claimed c ON c.id = p.id
        LEFT JOIN run r ON r.id = c.run LEFT JOIN subject s ON s.id = r.subject
    """)


async def claim_next(
    conn: db.Connection,
    *,
    principal_id: str,
    keys: Sequence[str],
    f: SlotFilter,
    now: datetime,
) -> deadline_rows.SlotContext | None:
    """Claim the most urgent open slot the principal may take, on its timeline; None if none.

    The claimed slot comes back with its run, clocks and timers (one round trip).
    """
    sql, args = claim_next_statement(principal_id, keys, f, now)
    return context_of(await conn.fetchrow(sql, *args))


def claim_next_statement(
    principal_id: str,
    keys: Sequence[str],
    f: SlotFilter,
    now: datetime,
    *,
    context: bool = True,
) -> tuple[str, list[Any]]:
    """The claim-next statement and its arguments; without ``context`` it is the bare claim
    (with its timeline line) returning the slot's columns only: what benchmarks compare with."""
    args: list[Any] = [principal_id, list(keys), now]
    choice = _choice(filter_sql(f, args))
    sql = f"WITH {choice}" + _at(f"""
        , claimed AS (
            UPDATE slot s SET status = 'claimed', holder = $1, claimed_at = $3,
                              version = s.version + 1, updated_at = $3, {_HELD}
            FROM next WHERE s.id = next.id
            RETURNING s.*
        ), audited AS (
            -- The timeline line travels in the same statement: one round trip, not two.
            INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
            SELECT run, id, 'slot.claimed', $1, 'claim next', jsonb_build_object('slot', name), $3
            FROM claimed
        )
        {with_context("claimed") if context else f"SELECT {SLOT_COLUMNS} FROM claimed"}
    """)
    return sql, args
