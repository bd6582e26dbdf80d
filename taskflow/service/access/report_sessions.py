"""Report page sessions: what the /reports sign-in keeps instead of the API token.

Signing in with a staff token makes a short-lived session (``TASKFLOW_REPORT_SESSION_TTL``,
default 8 hours, never past the token's own expiry): a random value goes into the cookie,
the table keeps only its SHA-256 with the principal, when it was made, when it expires and
when it was revoked. Sign-out revokes it server-side, so a copied cookie stops working too;
the API token itself never reaches the browser's cookie jar.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from datetime import datetime, timedelta

from taskflow.core.access import principals as core
from taskflow.service.access import principals as principal_service
from taskflow.service.common.container import Services
from taskflow.store.access import principals as principal_rows
from taskflow.store.access import report_sessions as store

#: Random bytes in a session id (256 bits).
ID_BYTES = 32
#: Longest cookie value looked up (longer ones are not ours).
MAX_ID_LENGTH = 100
#: How long ended (expired or revoked) sessions are kept before a sign-in deletes them.
KEEP_ENDED = timedelta(days=1)


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Opened:
    """A session just opened: who, its id (the cookie's value) and when it ends."""

    principal: core.Principal
    session_id: str
    expires_at: datetime


async def sign_in(services: Services, token: str) -> Opened:
    """Check a staff token and open a session for its principal.

    The session ends after ``TASKFLOW_REPORT_SESSION_TTL`` or when the token does, whichever
    comes first: a token minted for an hour opens no more than an hour of report pages.
    Raises :class:`errors.AuthenticationError` for a token that is not valid.
    """
    principal = await principal_service.authenticate(services, token)
    session_id = secrets.token_urlsafe(ID_BYTES)
    now = services.clock.now()
    expires = min(
        now + services.settings.report_session_ttl,
        services.staff_tokens.expires_at(token, now),
    )
    async with services.db.transaction() as conn:
        # Housekeeping on the way: sessions over for a day are of no use to anyone.
        await store.delete_ended(conn, now - KEEP_ENDED)
        await store.create(conn, _hash(session_id), principal.id, now, expires)
    return Opened(principal, session_id, expires)


async def principal_of(services: Services, session_id: str | None) -> core.Principal | None:
    """The active principal of a live session, or None (unknown, expired, revoked)."""
    if not session_id or len(session_id) > MAX_ID_LENGTH:
        return None
    async with services.db.connection() as conn:
        principal_id = await store.live_principal(conn, _hash(session_id), services.clock.now())
        if principal_id is None:
            return None
        principal = await principal_rows.get(conn, principal_id)
    return principal if principal is not None and principal.active else None


async def sign_out(services: Services, session_id: str | None) -> bool:
    """Revoke a session (True when a live one was revoked); unknown ids change nothing."""
    if not session_id or len(session_id) > MAX_ID_LENGTH:
        return False
    async with services.db.transaction() as conn:
        return await store.revoke(conn, _hash(session_id), services.clock.now())


async def sign_out_everywhere(services: Services, principal_id: str) -> int:
    """Revoke every report session of a principal; how many were live."""
    async with services.db.transaction() as conn:
        return await store.revoke_all(conn, principal_id, services.clock.now())
