"""claim-next: take the most urgent open slot a principal may take, in one statement when it can.

Two statements of ``slots/claims.sql``, one choice of slot (``FOR UPDATE SKIP LOCKED`` on the open
slots in urgency order, so concurrent claimers never wait on, or get, the
same row). Claim-next locks no run (docs/architecture.md, "Lock order"): it
holds one slot, then that slot's clocks and timers, which every other writer
takes only after the slot; its timeline line's key-share lock on the run is
compatible with the ``FOR NO KEY UPDATE`` run lock of every writer.

- :func:`claim_next_plain` claims *and* carries out the claim's deadlines in
  one autocommitted statement when the chosen slot is plain (see
  ``core/slots/claim_facts.py``): its ``assigned`` clock met, that clock's breach
  timer and reminders cancelled, its nearest due instant moved to its other
  running clocks, its ``slot.claimed`` and ``clock.met`` lines written. The
  statement chooses the slot (planned for the caller's keys on every call: a
  generic plan of the choice walks the audience index and sorts) and leaves the
  writes to the SQL function ``claim_plain`` (:data:`FUNCTION`), whose statements
  PL/pgSQL plans once per session; as data-modifying CTEs they were planned on
  every call, which cost more than running them (bench/README.md). What
  it writes is what the general path (the unit of work's planner,
  ``core/common/unit_of_work.plan``) writes: ``tests/integration/test_claim_paths.py``
  compares the two on every situation the statement takes. For a slot that is
  not plain it claims nothing and says so.
- :func:`claim_next` claims and returns the slot with its run, clocks and timers
  so that the service's general path plans the deadlines with the unit of work
  and writes them in the same transaction (``service/clocks/deadlines.after_slot_move``).

The caller's filters are the builder's fragments (``queries.slot_filters``); the catalog's
facts (``ClaimFacts``) are parameters, so a filter shape has one text and one prepared plan.
They travel as one ``text`` (``ClaimFacts.text``, built once per catalog): asyncpg encodes a
``str`` as one copy, where each element of two ``text[]`` was checked and encoded per claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.core.runs.model import SlotView
from taskflow.core.slots import claim_facts
from taskflow.core.slots.filters import SlotFilter
from taskflow.store.clocks import deadlines as deadline_rows
from taskflow.store.clocks import risk_sql
from taskflow.store.clocks.business_sql import real_us
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import Statement, with_columns
from taskflow.store.runs.runs import SLOT_COLUMNS, RunHead, slot_from
from taskflow.store.slots.queries import CONTEXT, context_of, slot_filters

#: The slot's columns, by name.
SLOT_FIELDS = tuple(name.strip() for name in SLOT_COLUMNS.split(","))
#: What claim_plain returns of the claimed slot's run (the rest of its head is the slot's).
_HEAD_COLUMNS = (
    "f.claimed_definition_version AS r_definition_version, f.claimed_run_state AS r_state, "
    "f.claimed_run_status AS r_status, f.claimed_subject_type AS s_type, "
    "f.claimed_subject_external_id AS s_external_id, "
    "f.claimed_subject_attributes AS s_attributes"
)


def _iso(instant: str) -> str:
    """SQL for ``instant`` as Python's ``isoformat()`` of it in UTC (microseconds when any)."""
    return (
        f"to_char({instant} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS') "
        f"|| CASE WHEN extract(microseconds FROM {instant})::bigint % 1000000 = 0 THEN '' "
        f"ELSE to_char({instant} AT TIME ZONE 'UTC', '.US') END || '+00:00'"
    )


#: The statements of ``slots/claims.sql``, the shared pieces filled in.
SQL = with_columns(
    sql.statements("slots/claims"),
    held_us=real_us("s.held_since", "(SELECT at FROM next)"),
    running=risk_sql.not_paused("k.pauses"),
    due_iso=_iso("v_due"),
    claimed_columns=", ".join(
        [f"(f.claimed_slot).{name} AS {name}" for name in SLOT_FIELDS] + [_HEAD_COLUMNS]
    ),
    slot_columns=SLOT_COLUMNS,
    **CONTEXT,
)
#: The SQL function that writes a plain claim, and its CREATE FUNCTION statement
#: (``schema_extras.EXTRA_FUNCTIONS``; migration 2026-12-04T20:30 holds a copy, 05:45, 04:30
#: and 04:12 its earlier versions).
FUNCTION_NAME = "claim_plain"
FUNCTION = SQL["claim_plain_function"]


@dataclass(frozen=True)
class PlainClaim:
    """What :func:`claim_next_plain` did: the slot it claimed, or the one it left (not plain)."""

    candidate: str
    slot: SlotView | None
    #: What the answer needs of the claimed slot's run, as the statement read it (no
    #: further read; the whole run is decoded only where it is used).
    run: RunHead | None = None


async def claim_next_plain(
    conn: db.Connection,
    *,
    principal_id: str,
    keys: Sequence[str],
    f: SlotFilter,
    now: datetime,
    facts: claim_facts.ClaimFacts,
    caller_digest: str | None = None,
    workspace: str = "",
) -> PlainClaim | None:
    """Claim the most urgent open slot with its deadlines if it is plain; None if none is open.

    Run it outside a transaction: it is one statement, atomic on its own. With
    ``caller_digest`` (``principals.get_checked``'s) it claims nothing (None) unless the
    principal's row is still the one read with that digest. ``workspace``: the caller's,
    the only one whose slots it takes ('' for none: a test of the bare statement).
    """
    sql, args = claim_next_plain_statement(
        principal_id, keys, f, now, facts, caller_digest, workspace
    )
    row = await conn.fetchrow(sql, *args)
    if row is None:
        return None
    if not row["plain"]:
        return PlainClaim(str(row["candidate"]), None)
    slot = slot_from(row)
    return PlainClaim(str(row["candidate"]), slot, _head(row, slot.run_id))


def _head(row: Any, run_id: str) -> RunHead:
    """The claimed slot's run head from claim_next_plain's row (its workflow is the slot's)."""
    return RunHead(
        run_id, row["workflow"], row["r_definition_version"], row["r_state"], row["r_status"],
        row["s_attributes"], row["s_type"], row["s_external_id"],
    )  # fmt: skip


def claim_next_plain_statement(
    principal_id: str,
    keys: Sequence[str],
    f: SlotFilter,
    now: datetime,
    facts: claim_facts.ClaimFacts,
    caller_digest: str | None = None,
    workspace: str = "",
) -> tuple[str, list[Any]]:
    """The statement of :func:`claim_next_plain` and its arguments (its text composed once
    per filter shape: ``sql_builder``)."""
    st = Statement(SQL["claim_next_plain"], principal_id, list(keys), now, facts.text)
    if workspace:
        st.where("slot_in_workspace", workspace)
    if caller_digest is not None:
        st.where("caller_unchanged", principal_id, caller_digest)
    return slot_filters(st, f).build()


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
    base = SQL["claim_next"] if context else SQL["claim_next_bare"]
    return slot_filters(Statement(base, principal_id, list(keys), now), f).build()
