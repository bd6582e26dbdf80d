"""Principal rows <-> core principals."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core import principals
from taskflow.store import db

_COLUMNS = "id, display_name, email, roles, groups, attributes, time_zone, calendar, active, powers"
_READ = f"{_COLUMNS}, tokens_valid_after"


def _to_core(row: asyncpg.Record) -> principals.Principal:
    return principals.Principal(
        id=row["id"],
        display_name=row["display_name"],
        email=row["email"],
        roles=tuple(row["roles"]),
        groups=tuple(row["groups"]),
        attributes=row["attributes"],
        time_zone=row["time_zone"],
        calendar=row["calendar"],
        active=row["active"],
        tokens_valid_after=row["tokens_valid_after"],
        powers=principals.build_powers(row["powers"], row["id"]),
    )


async def get(conn: db.Connection, principal_id: str) -> principals.Principal | None:
    row = await conn.fetchrow(f"SELECT {_READ} FROM principal WHERE id = $1", principal_id)
    return _to_core(row) if row else None


async def get_many(conn: db.Connection, ids: list[str]) -> dict[str, principals.Principal]:
    rows = await conn.fetch(f"SELECT {_READ} FROM principal WHERE id = ANY($1)", ids)
    return {row["id"]: _to_core(row) for row in rows}


async def upsert(
    conn: db.Connection,
    principal: principals.Principal,
    now: datetime,
    *,
    active: bool | None,
    keep_powers: bool = False,
) -> tuple[principals.Principal, bool, bool]:
    """Insert or update; (the stored principal, whether it was created, whether this
    update deactivated it).

    ``active`` None keeps what is stored (a new principal starts active); a deactivation
    moves ``tokens_valid_after`` to ``now``, so the tokens issued before stay refused even
    after an explicit re-activation. ``keep_powers``: an update keeps the stored grants
    (the caller left them out).
    """
    was_active = await conn.fetchval(
        "SELECT active FROM principal WHERE id = $1 FOR UPDATE", principal.id
    )
    row = await conn.fetchrow(
        f"""
        INSERT INTO principal ({_COLUMNS}, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, coalesce($9, true), $11, $10, $10)
        ON CONFLICT (id) DO UPDATE SET
            display_name = EXCLUDED.display_name, email = EXCLUDED.email,
            roles = EXCLUDED.roles, groups = EXCLUDED.groups,
            attributes = EXCLUDED.attributes, time_zone = EXCLUDED.time_zone,
            calendar = EXCLUDED.calendar, active = coalesce($9, principal.active),
            tokens_valid_after = CASE WHEN principal.active AND $9 = false THEN $10
                                      ELSE principal.tokens_valid_after END,
            powers = CASE WHEN $12 THEN principal.powers ELSE EXCLUDED.powers END,
            updated_at = EXCLUDED.updated_at
        RETURNING {_READ}, (xmax = 0) AS created
        """,
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
    )
    assert row is not None
    return _to_core(row), bool(row["created"]), bool(was_active) and not row["active"]


async def deactivate(
    conn: db.Connection, principal_id: str, now: datetime
) -> tuple[principals.Principal, bool] | None:
    """Deactivate; (the principal, whether it was active before). Moves tokens_valid_after."""
    was_active = await conn.fetchval(
        "SELECT active FROM principal WHERE id = $1 FOR UPDATE", principal_id
    )
    row = await conn.fetchrow(
        f"""
        UPDATE principal SET active = false, updated_at = $2,
            tokens_valid_after = CASE WHEN active THEN $2 ELSE tokens_valid_after END
        WHERE id = $1
        RETURNING {_READ}
        """,
        principal_id,
        now,
    )
    return (_to_core(row), bool(was_active)) if row else None


async def revoke_tokens(
    conn: db.Connection, principal_id: str, now: datetime
) -> principals.Principal | None:
    """Refuse every token issued before ``now`` ("sign out everywhere")."""
    row = await conn.fetchrow(
        f"UPDATE principal SET tokens_valid_after = greatest(tokens_valid_after, $2), "
        f"updated_at = $2 WHERE id = $1 RETURNING {_READ}",
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
    where = [
        "($1::text IS NULL OR $1 = ANY(roles))",
        "($2::text IS NULL OR $2 = ANY(groups))",
        "($3::bool IS NULL OR active = $3)",
        "($4::text IS NULL OR id ILIKE '%' || $4 || '%' OR display_name ILIKE '%' || $4 || '%')",
    ]
    args: list[Any] = [role, group, active, search]
    condition = " AND ".join(where)
    total = await conn.fetchval(f"SELECT count(*) FROM principal WHERE {condition}", *args)
    rows = await conn.fetch(
        f"SELECT {_READ} FROM principal WHERE {condition} AND ($5::text IS NULL OR id > $5) "
        "ORDER BY id LIMIT $6",
        *args,
        after_id,
        limit,
    )
    return [_to_core(row) for row in rows], int(total)


async def carrying_any(conn: db.Connection, keys: Sequence[str]) -> list[principals.Principal]:
    """Active principals that may carry one of an audience's ``keys``, by id.

    User, e-mail, role and group keys match exactly; an ``attr:<name>=<value>`` key
    matches every principal having the attribute ``name`` (its values may be text,
    numbers, booleans or lists, which SQL cannot compare as keys do), so the caller
    checks the audience on the rows (``recipients.decide``).
    """
    if "any" in keys:
        rows = await conn.fetch(f"SELECT {_READ} FROM principal WHERE active ORDER BY id")
        return [_to_core(row) for row in rows]
    attributes = sorted(
        {k.removeprefix("attr:").split("=", 1)[0] for k in keys if k.startswith("attr:")}
    )
    rows = await conn.fetch(
        f"""
        SELECT {_READ} FROM principal
        WHERE active AND (
            ('user:' || id) = ANY($1::text[])
            OR ('email:' || coalesce(email, '')) = ANY($1::text[])
            OR EXISTS (SELECT 1 FROM unnest(roles) r WHERE 'role:' || r = ANY($1::text[]))
            OR EXISTS (SELECT 1 FROM unnest(groups) g WHERE 'group:' || g = ANY($1::text[]))
            OR attributes ?| $2::text[])
        ORDER BY id
        """,
        list(keys),
        attributes,
    )
    return [_to_core(row) for row in rows]
