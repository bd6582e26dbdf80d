"""Principal rows <-> core principals."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core.access import principals
from taskflow.core.access import working_hours as wh
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns

_COLUMNS = "id, display_name, email, roles, groups, attributes, time_zone, calendar, active, powers"
_READ = (
    f"{_COLUMNS}, tokens_valid_after, working_hours, leave_spans, workspace,"
    " (SELECT ws.status = 'suspended' FROM workspace ws WHERE ws.id = principal.workspace)"
    " AS workspace_suspended,"
    " (SELECT ws.requests_per_minute FROM workspace ws WHERE ws.id = principal.workspace)"
    " AS workspace_requests_per_minute,"
    " coalesce((SELECT ws.max_runs IS NOT NULL FROM workspace ws"
    " WHERE ws.id = principal.workspace), false) AS workspace_runs_limited,"
    " coalesce((SELECT ws.max_open_slots IS NOT NULL FROM workspace ws"
    " WHERE ws.id = principal.workspace), false) AS workspace_slots_limited"
)

#: The statements of ``access/principals.sql``, their column lists filled.
SQL = with_columns(sql.statements("access/principals"), read=_READ)


def _to_core(row: asyncpg.Record) -> principals.Principal:
    return db.record_as(
        principals.Principal,
        row,
        powers=principals.build_powers(row["powers"], row["id"]),
        working_hours=wh.hours_from_json(row["working_hours"]),
        leave=wh.leave_from_json(row["leave_spans"]),
    )


async def get(conn: db.Connection, principal_id: str) -> principals.Principal | None:
    row = await conn.fetchrow(SQL["get"], principal_id)
    return _to_core(row) if row else None


async def get_checked(
    conn: db.Connection, principal_id: str
) -> tuple[principals.Principal, str] | None:
    """The principal and the digest of its row (fragment ``caller_unchanged`` checks it)."""
    row = await conn.fetchrow(SQL["get_checked"], principal_id)
    return (_to_core(row), str(row["digest"])) if row else None


async def get_many(conn: db.Connection, ids: list[str]) -> dict[str, principals.Principal]:
    rows = await conn.fetch(SQL["get_many"], ids)
    return {row["id"]: _to_core(row) for row in rows}


async def upsert(
    conn: db.Connection,
    principal: principals.Principal,
    now: datetime,
    *,
    active: bool | None,
    keep_powers: bool = False,
) -> tuple[principals.Principal, bool, bool] | None:
    """Insert or update; (the stored principal, whether it was created, whether this
    update deactivated it), or None when another workspace holds the id (nothing written:
    principal ids are unique across the deployment, docs/workspaces.md).

    ``active`` None keeps what is stored (a new principal starts active); a deactivation
    moves ``tokens_valid_after`` to ``now``, so the tokens issued before stay refused even
    after an explicit re-activation. ``keep_powers``: an update keeps the stored grants
    (the caller left them out).
    """
    was_active = await conn.fetchval(SQL["lock_active"], principal.id)
    row = await conn.fetchrow(
        SQL["upsert"],
        principal.id,
        principal.display_name,
        principal.email,
        list(principal.roles),
        list(principal.groups),
        dict(principal.attributes),
        principal.time_zone,
        principal.calendar,
        active,
        now,
        [g.as_dict() for g in principal.powers],
        keep_powers,
        principal.workspace or None,
    )
    if row is None:
        return None
    return _to_core(row), bool(row["created"]), bool(was_active) and not row["active"]


async def deactivate(
    conn: db.Connection, principal_id: str, now: datetime
) -> tuple[principals.Principal, bool] | None:
    """Deactivate; (the principal, whether it was active before). Moves tokens_valid_after."""
    was_active = await conn.fetchval(SQL["lock_active"], principal_id)
    row = await conn.fetchrow(
        SQL["deactivate"],
        principal_id,
        now,
    )
    return (_to_core(row), bool(was_active)) if row else None


async def revoke_tokens(
    conn: db.Connection, principal_id: str, now: datetime
) -> principals.Principal | None:
    """Refuse every token issued before ``now`` ("sign out everywhere")."""
    row = await conn.fetchrow(
        SQL["revoke_tokens"],
        principal_id,
        now,
    )
    return _to_core(row) if row else None


async def page(
    conn: db.Connection,
    *,
    after_id: str | None,
    limit: int,
    role: str | None = None,
    group: str | None = None,
    active: bool | None = None,
    search: str | None = None,
) -> tuple[list[principals.Principal], int]:
    """A keyset page ordered by id, and the total count matching the filter."""
    args: list[Any] = [role, group, active, search]
    total = await conn.fetchval(SQL["page_count"], *args)
    rows = await conn.fetch(SQL["page"], *args, after_id, limit)
    return [_to_core(row) for row in rows], int(total)


async def carrying_any(conn: db.Connection, keys: Sequence[str]) -> list[principals.Principal]:
    """Active principals that may carry one of an audience's ``keys``, by id.

    User, e-mail, role and group keys match exactly; an ``attr:<name>=<value>`` key
    matches every principal having the attribute ``name`` (its values may be text,
    numbers, booleans or lists, which SQL cannot compare as keys do), so the caller
    checks the audience on the rows (``recipients.decide``).
    """
    if "any" in keys:
        rows = await conn.fetch(SQL["active"])
        return [_to_core(row) for row in rows]
    attributes = sorted(
        {k.removeprefix("attr:").split("=", 1)[0] for k in keys if k.startswith("attr:")}
    )
    rows = await conn.fetch(
        SQL["carrying_any"],
        list(keys),
        attributes,
    )
    return [_to_core(row) for row in rows]


async def set_working_hours(
    conn: db.Connection, principal_id: str, hours: wh.WorkingHours | None, now: datetime
) -> principals.Principal | None:
    """Store ``principal_id``'s working hours (None: unset); None when no such principal."""
    row = await conn.fetchrow(
        SQL["set_working_hours"], principal_id, hours.as_dict() if hours else None, now
    )
    return _to_core(row) if row else None


async def set_leave(
    conn: db.Connection, principal_id: str, leave: Sequence[wh.Leave], now: datetime
) -> principals.Principal | None:
    """Replace ``principal_id``'s leave; None when no such principal."""
    row = await conn.fetchrow(
        SQL["set_leave"], principal_id, [entry.as_dict() for entry in leave], now
    )
    return _to_core(row) if row else None


async def lock(conn: db.Connection, principal_id: str) -> principals.Principal | None:
    """Principal ``principal_id``, its row locked for an update of its leave."""
    row = await conn.fetchrow(SQL["lock"], principal_id)
    return _to_core(row) if row else None
