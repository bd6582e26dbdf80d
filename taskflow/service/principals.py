"""Principal use cases: authenticate, look up, upsert, deactivate, list, bulk-load."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from taskflow import errors
from taskflow.core import principals as core
from taskflow.service import retry
from taskflow.service.container import Services
from taskflow.store import principals as rows

MAX_PAGE = 100


async def authenticate(services: Services, token: str) -> core.Principal:
    """The active principal a bearer token names, or :class:`AuthenticationError`."""
    principal_id = services.staff_tokens.verify(token, services.clock.now())
    async with services.db.connection() as conn:
        principal = await rows.get(conn, principal_id)
    if principal is None:
        raise errors.AuthenticationError(
            f"The bearer token names principal {principal_id!r}, who is not known here."
        )
    if not principal.active:
        raise errors.AuthenticationError(
            f"Principal {principal_id!r} has been deactivated; ask an administrator to "
            "reactivate the account."
        )
    return principal


def require_admin(actor: core.Principal, action: str) -> None:
    if not actor.is_admin:
        raise errors.Forbidden(
            f"Only principals with the {core.ADMIN_ROLE!r} role may {action}; "
            f"{actor.id!r} has roles {list(actor.roles)}."
        )


async def get(services: Services, principal_id: str) -> core.Principal | None:
    async with services.db.connection() as conn:
        return await rows.get(conn, principal_id)


@retry.retried("save the principal")
async def upsert(
    services: Services, actor: core.Principal | None, data: Mapping[str, Any]
) -> tuple[core.Principal, bool]:
    """Create or update a principal (``actor`` None means the operator's CLI)."""
    if actor is not None:
        require_admin(actor, "create or change principals")
    principal = core.build(data)
    async with services.db.transaction() as conn:
        return await rows.upsert(conn, principal, services.clock.now())


@retry.retried("deactivate the principal")
async def deactivate(
    services: Services, actor: core.Principal, principal_id: str
) -> core.Principal:
    require_admin(actor, "deactivate principals")
    if principal_id == actor.id:
        raise errors.ValidationError(
            "You cannot deactivate yourself; ask another administrator.", field="id"
        )
    async with services.db.transaction() as conn:
        principal = await rows.set_active(conn, principal_id, False, services.clock.now())
    if principal is None:
        raise errors.NotFound(f"No principal with id {principal_id!r}.")
    return principal


async def page(
    services: Services,
    actor: core.Principal,
    *,
    first: int,
    after_id: str | None,
    role: str | None = None,
    group: str | None = None,
    active: bool | None = None,
    search: str | None = None,
) -> tuple[list[core.Principal], int, bool]:
    """A page of principals for an admin: (rows, total count, has next page)."""
    require_admin(actor, "list principals")
    if not 0 < first <= MAX_PAGE:
        raise errors.ValidationError(f"first must be between 1 and {MAX_PAGE}.", field="first")
    async with services.db.connection() as conn:
        found, total = await rows.page(
            conn,
            after_id=after_id,
            limit=first + 1,
            role=role,
            group=group,
            active=active,
            search=search,
        )
    return found[:first], total, len(found) > first


def parse_file(path: Path) -> list[dict[str, Any]]:
    """Read principals from a JSON (a list, or {"principals": [...]}) or CSV file.

    CSV columns: id, display_name, email, roles and groups (separated by ``;``),
    time_zone, calendar, active, attributes (a JSON object) and ``attr.<name>``
    columns for single attributes.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise errors.ValidationError(f"{path}: not valid JSON ({exc}).") from None
        if isinstance(data, dict):
            data = data.get("principals")
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise errors.ValidationError(
                f'{path}: expected a JSON list of principal objects (or {{"principals": [...]}}).'
            )
        return data
    if path.suffix.lower() == ".csv":
        records: list[dict[str, Any]] = []
        for number, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
            record: dict[str, Any] = {
                k: v for k, v in row.items() if k and not k.startswith("attr.")
            }
            attributes: dict[str, Any] = {}
            if record.get("attributes"):
                try:
                    attributes = json.loads(record["attributes"])
                except json.JSONDecodeError:
                    raise errors.ValidationError(
                        f"{path}, line {number}: the attributes column is not a JSON object."
                    ) from None
            attributes.update(
                {k[5:]: v for k, v in row.items() if k and k.startswith("attr.") and v}
            )
            record["attributes"] = attributes
            records.append(record)
        return records
    raise errors.ValidationError(f"{path}: principals are loaded from .json or .csv files.")


async def load(services: Services, records: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """Upsert many principals in one transaction: all or nothing. Returns (created, updated)."""
    built = []
    for index, record in enumerate(records, start=1):
        try:
            built.append(core.build(record))
        except errors.ValidationError as exc:
            raise errors.ValidationError(f"record {index}: {exc.message}") from None
    created = 0
    async with services.db.transaction() as conn:
        now = services.clock.now()
        for principal in built:
            _, was_created = await rows.upsert(conn, principal, now)
            created += was_created
    return created, len(built) - created
