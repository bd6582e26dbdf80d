"""Principal use cases: authenticate, look up, upsert, deactivate, list, bulk-load."""

from __future__ import annotations

import csv
import difflib
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from taskflow import errors
from taskflow.core.access import principals as core
from taskflow.service.access import access, acting, callers
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.slots import held
from taskflow.store.access import principals as rows
from taskflow.store.access import report_sessions
from taskflow.store.common import db
from taskflow.store.workspaces import scope as workspace_scope

MAX_PAGE = 100


async def authenticate(services: Services, token: str) -> core.Principal:
    """The active principal a bearer token names, or :class:`AuthenticationError`."""
    principal_id, issued_at = services.staff_tokens.verify_claims(token, services.clock.now())
    with workspace_scope.every():  # the principal's row says its workspace
        async with services.db.connection() as conn:
            found = await rows.get_checked(conn, principal_id)
    services.callers.forget(principal_id)
    if found is None:
        raise errors.AuthenticationError(
            f"The bearer token names principal {principal_id!r}, who is not known here."
        )
    principal, digest = found
    _admit(principal, issued_at)
    await services.request_rates.admit(services.db, principal, services.clock.now())
    services.callers.keep(callers.Presumed(principal, digest))
    acting.act_as(principal)  # the request acts in its caller's workspace from here on
    return principal


async def authenticate_many(
    services: Services, tokens: Sequence[str]
) -> dict[str, core.Principal | errors.AuthenticationError]:
    """:func:`authenticate` for many tokens at once (open sockets re-checked together):
    token -> its principal, or the refusal :func:`authenticate` would give; one query."""
    now = services.clock.now()
    claims: dict[str, tuple[str, datetime | None]] = {}
    answers: dict[str, core.Principal | errors.AuthenticationError] = {}
    for token in dict.fromkeys(tokens):
        try:
            claims[token] = services.staff_tokens.verify_claims(token, now)
        except errors.AuthenticationError as refused:
            answers[token] = refused
    with workspace_scope.every():
        async with services.db.connection() as conn:
            found = await rows.get_many(conn, sorted({c[0] for c in claims.values()}))
    for token, (principal_id, issued_at) in claims.items():
        principal = found.get(principal_id)
        try:
            if principal is None:
                raise errors.AuthenticationError(f"Principal {principal_id!r} is not known here.")
            _admit(principal, issued_at)
            answers[token] = principal
        except errors.AuthenticationError as refused:
            answers[token] = refused
    return answers


def presume(services: Services, token: str) -> callers.Presumed | None:
    """The principal a valid bearer token names as this process last authenticated it,
    not read now (a statement checks its row's digest: ``service/access/callers.py``); None when
    this process does not know it or it would refuse this token (:func:`authenticate`).
    An invalid or expired token is refused as by :func:`authenticate`."""
    principal_id, issued_at = services.staff_tokens.verify_claims(token, services.clock.now())
    kept = services.callers.get(principal_id)
    if kept is None:
        return None
    try:
        _admit(kept.principal, issued_at)
    except errors.AuthenticationError:
        return None
    if kept.principal.workspace_requests_per_minute is not None:
        # Its workspace counts its requests (a statement: service/workspaces/limits.py):
        # it is authenticated as usual, where the count is taken.
        return None
    acting.act_as(kept.principal)
    return kept


def _admit(principal: core.Principal, issued_at: datetime | None) -> None:
    """Refuse a deactivated principal, and a token issued before its sign-out cutoff."""
    principal_id = principal.id
    acting.refuse_suspended(principal)
    if not principal.active:
        raise errors.AuthenticationError(
            f"Principal {principal_id!r} has been deactivated; ask an administrator to "
            "reactivate the account."
        )
    cutoff = principal.tokens_valid_after
    if cutoff is not None and (issued_at is None or issued_at <= cutoff):
        raise errors.AuthenticationError(
            f"The bearer token was issued before {principal_id!r} signed out everywhere (or "
            f"was deactivated) at {cutoff.isoformat()}; tokens from before then are refused. "
            "Ask for a new token (taskflow token <principal-id>).",
            tokens_valid_after=cutoff.isoformat(),
        )


def require_admin(actor: core.Principal, action: str) -> None:
    access.require_admin(actor, action)


def check_grants(services: Services, principal: core.Principal) -> None:
    """Every workflow and event a grant names must exist: a typo would grant nothing."""
    known = {d.name: d for d in services.catalog.latest()}
    for grant in principal.powers:
        unknown = sorted(set(grant.workflows or ()) - set(known))
        if unknown:
            raise errors.ValidationError(
                f"principal {principal.id!r}: powers name unknown workflows {unknown}; known: "
                f"{', '.join(sorted(known))}.",
                field="powers",
            )
        reached = [known[w] for w in grant.workflows] if grant.workflows else known.values()
        events = {slot.waits_for for d in reached for _, slot in d.slots()}
        missing = sorted(set(grant.events or ()) - events)
        if missing:
            raise errors.ValidationError(
                f"principal {principal.id!r}: powers name events {missing} that no slot of "
                f"the granted workflows waits for; known: {', '.join(sorted(events))}.",
                field="powers",
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
    active = core.requested_active(data)
    if actor is not None and active is False and principal.id == actor.id:
        raise errors.ValidationError(
            "You cannot deactivate yourself; ask another administrator.", field="active"
        )
    check_grants(services, principal)
    async with services.db.transaction() as conn:
        now = services.clock.now()
        keep_powers = data.get("powers") is None
        saved = await rows.upsert(conn, principal, now, active=active, keep_powers=keep_powers)
        stored, created, deactivated = core.saved_or_taken(saved, principal.id)
        if deactivated:
            await _on_deactivation(services, conn, stored, actor, now)
    return stored, created


async def set_agent(
    services: Services,
    actor: core.Principal | None,
    principal_id: str,
    workflows: Sequence[str] | None,
    *,
    allow: bool,
) -> core.Principal:
    """Turn a principal's agent write tools on (``workflows``: those, None: every one) or off
    (``allow`` False): its ``agent`` grants replaced, every other grant kept. Admins only
    (``actor`` None: the operator's CLI)."""
    found = await get(services, principal_id)
    if found is None:
        raise errors.NotFound(f"No principal has the id {principal_id!r}.")
    kept = [g.as_dict() for g in found.powers if g.power != core.AGENT]
    if allow:
        grant: dict[str, Any] = {"power": core.AGENT}
        if workflows is not None:
            grant["workflows"] = list(workflows)
        kept.append(grant)
    record = {
        "id": found.id,
        "display_name": found.display_name,
        "email": found.email,
        "roles": list(found.roles),
        "groups": list(found.groups),
        "attributes": dict(found.attributes),
        "time_zone": found.time_zone,
        "calendar": found.calendar,
        "powers": kept,
    }
    stored, _ = await upsert(services, actor, record)
    return stored


async def _on_deactivation(
    services: Services,
    conn: db.Connection,
    principal: core.Principal,
    actor: core.Principal | None,
    now: datetime,
) -> None:
    """What deactivating someone does beside refusing their tokens: their slots go back
    to the pool, in the deactivation's transaction."""
    by = actor.id if actor is not None else "operator"
    await report_sessions.revoke_all(conn, principal.id, now)
    await held.release_all(
        services, conn, principal, by, now, f"{principal.id} was deactivated by {by}"
    )


@retry.retried("deactivate the principal")
async def deactivate(
    services: Services, actor: core.Principal, principal_id: str
) -> core.Principal:
    """Deactivate a principal: their tokens are refused from now on and the slots they
    hold go back to the pool (each with a ``slot.released`` line), in one transaction."""
    require_admin(actor, "deactivate principals")
    if principal_id == actor.id:
        raise errors.ValidationError(
            "You cannot deactivate yourself; ask another administrator.", field="id"
        )
    async with services.db.transaction() as conn:
        now = services.clock.now()
        found = await rows.deactivate(conn, principal_id, now)
        if found is None:
            raise errors.NotFound(f"No principal with id {principal_id!r}.")
        principal, was_active = found
        if was_active:
            await _on_deactivation(services, conn, principal, actor, now)
    return principal


@retry.retried("sign out everywhere")
async def sign_out_everywhere(
    services: Services, actor: core.Principal | None, principal_id: str
) -> core.Principal:
    """Refuse every staff token of ``principal_id`` issued before now, and end its report
    page sessions.

    Anyone may do it for themselves, an admin for anyone (``actor`` None: the operator's
    CLI, ``taskflow token PRINCIPAL --revoke``).
    """
    if actor is not None and principal_id != actor.id:
        require_admin(actor, "sign other principals out")
    async with services.db.transaction() as conn:
        now = services.clock.now()
        principal = await rows.revoke_tokens(conn, principal_id, now)
        # The report pages' sessions end with the tokens they were opened with.
        await report_sessions.revoke_all(conn, principal_id, now)
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


#: Keys a principal record in a file may have (camelCase spellings as in the API).
FILE_KEYS: frozenset[str] = frozenset(
    (
        "id",
        "display_name",
        "displayName",
        "email",
        "roles",
        "groups",
        "attributes",
        "powers",
        "time_zone",
        "timeZone",
        "calendar",
        "active",
    )
)


def _refuse_unknown_keys(path: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A key nobody reads is a typo (``rolez``) that would silently load the wrong person."""
    for number, record in enumerate(records, start=1):
        unknown = sorted(k for k in record if k not in FILE_KEYS)
        if unknown:
            near = difflib.get_close_matches(unknown[0], sorted(FILE_KEYS), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise errors.ValidationError(
                f"{path}, record {number} ({record.get('id')!r}): unknown key {unknown[0]!r}"
                f"{hint}; the keys are {', '.join(sorted(FILE_KEYS))} (CSV: also attr.<name>)."
            )
    return records


def parse_file(path: Path) -> list[dict[str, Any]]:
    """Read principals from a JSON (a list, or {"principals": [...]}) or CSV file.

    CSV columns: id, display_name, email, roles and groups (separated by ``;``),
    time_zone, calendar, active, attributes (a JSON object), powers (a JSON list of
    grants, see docs/access.md) and ``attr.<name>`` columns for single attributes.
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
        return _refuse_unknown_keys(path, data)
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
        return _refuse_unknown_keys(path, records)
    raise errors.ValidationError(f"{path}: principals are loaded from .json or .csv files.")


async def load(
    services: Services, records: Sequence[Mapping[str, Any]], *, workspace: str | None = None
) -> tuple[int, int]:
    """Upsert many principals in one transaction: all or nothing. Returns (created, updated).
    New ones are created in ``workspace`` (None: the caller's; the CLI's is the default)."""
    if workspace is not None and db.uuid_or_none(workspace) is None:
        raise errors.ValidationError(f"{workspace!r} is not a workspace id.", field="workspace")
    built = []
    for index, record in enumerate(records, start=1):
        try:
            principal = core.build(record)
            check_grants(services, principal)
            built.append((principal, record.get("powers") in (None, "")))
        except errors.ValidationError as exc:
            raise errors.ValidationError(f"record {index}: {exc.message}") from None
    created = 0
    async with services.db.transaction() as conn:
        now = services.clock.now()
        for record, (principal, keep_powers) in zip(records, built, strict=True):
            placed = replace(principal, workspace=workspace) if workspace else principal
            active = core.requested_active(record)
            saved = await rows.upsert(conn, placed, now, active=active, keep_powers=keep_powers)
            stored, was_created, deactivated = core.saved_or_taken(saved, principal.id)
            created += was_created
            if deactivated:
                await _on_deactivation(services, conn, stored, None, now)
    return created, len(built) - created
