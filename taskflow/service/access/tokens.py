"""Signed bearer tokens for staff.

A token is ``{"sub": principal id, "exp": unix seconds, "iat": unix microseconds}`` signed with
itsdangerous under a salt of its own, so a token made for another purpose (a
magic link, say) never verifies here. Keys come from ``TASKFLOW_SECRET_KEYS``,
newest first: the newest signs, every listed key verifies, and removing a key
retires every token it signed. Expiry is checked against the injected clock.
The issue instant lets a principal's ``tokens_valid_after`` refuse older tokens
(deactivation, sign out everywhere); tokens minted before it was carried count
as issued at the epoch.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from itsdangerous import BadSignature, URLSafeSerializer

from taskflow import errors

STAFF_SALT = "taskflow.staff-token.v1"
DEFAULT_TTL = timedelta(days=30)
#: How many verified tokens a process remembers (the first verified are forgotten first).
VERIFIED_TOKENS = 4096
#: The longest time to live ``taskflow token`` mints unless TASKFLOW_TOKEN_MAX_TTL says otherwise.
DEFAULT_MAX_TTL = timedelta(days=30)


def serializer(secret_keys: Sequence[str], salt: str) -> URLSafeSerializer:
    """A signer for one purpose (``salt``): the newest key signs, every listed key verifies."""
    if not secret_keys:
        raise errors.ConfigError("At least one signing key is needed (TASKFLOW_SECRET_KEYS).")
    # itsdangerous signs with the *last* key of the list; ours is newest first.
    return URLSafeSerializer(list(reversed(secret_keys)), salt=salt)


class StaffTokens:
    """Mints and verifies staff bearer tokens."""

    def __init__(self, secret_keys: Sequence[str]) -> None:
        self._serializer = serializer(secret_keys, STAFF_SALT)
        #: Tokens whose signature verified (the keys never change for an instance):
        #: token -> (subject, expiry, issue instant). Expiry is checked on every use.
        self._verified: OrderedDict[str, tuple[str, datetime, datetime | None]] = OrderedDict()

    def mint(self, principal_id: str, now: datetime, ttl: timedelta = DEFAULT_TTL) -> str:
        """A token for ``principal_id`` valid until ``now + ttl``."""
        if ttl <= timedelta(0):
            raise errors.ValidationError("A token's time to live must be positive (e.g. 8h, 30d).")
        expires = int((now + ttl).timestamp())
        issued = _microseconds(now)
        return str(self._serializer.dumps({"sub": principal_id, "exp": expires, "iat": issued}))

    def verify(self, token: str, now: datetime) -> str:
        """The principal id a valid token carries; :class:`AuthenticationError` otherwise."""
        return self.verify_claims(token, now)[0]

    def verify_claims(self, token: str, now: datetime) -> tuple[str, datetime | None]:
        """(principal id, issue instant or None for tokens minted before it was carried)
        of a valid token; :class:`AuthenticationError` otherwise."""
        subject, _, issued_at = self._valid(token, now)
        return subject, issued_at

    def expires_at(self, token: str, now: datetime) -> datetime:
        """When a valid token expires; :class:`AuthenticationError` for an invalid one."""
        return self._valid(token, now)[1]

    def _valid(self, token: str, now: datetime) -> tuple[str, datetime, datetime | None]:
        """(subject, expiry, issue instant) of a token valid at ``now``."""
        known = self._verified.get(token)
        if known is None:
            known = self._checked(token)
            self._verified[token] = known
            if len(self._verified) > VERIFIED_TOKENS:
                self._verified.popitem(last=False)
        expires = known[1]
        if expires <= now:
            raise errors.AuthenticationError(
                f"The bearer token expired at {expires.isoformat()}. Ask for a new token "
                "(taskflow token <principal-id>).",
                expired_at=expires.isoformat(),
            )
        return known

    def _checked(self, token: str) -> tuple[str, datetime, datetime | None]:
        """(subject, expiry, issue instant) of a token whose signature verifies."""
        try:
            claims = self._serializer.loads(token)
        except BadSignature:
            raise errors.AuthenticationError(
                "The bearer token is not valid: it was altered, is not a taskflow staff token, "
                "or was signed by a key that has been retired. Ask for a new token "
                "(taskflow token <principal-id>)."
            ) from None
        if not isinstance(claims, dict) or not isinstance(claims.get("sub"), str):
            raise errors.AuthenticationError("The bearer token carries no principal.")
        expires = datetime.fromtimestamp(int(claims.get("exp", 0)), UTC)
        issued = claims.get("iat")
        issued_at = (
            _EPOCH + timedelta(microseconds=issued)
            if isinstance(issued, int) and not isinstance(issued, bool)
            else None
        )
        return str(claims["sub"]), expires, issued_at


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _microseconds(instant: datetime) -> int:
    delta = instant - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def check_ttl(ttl: timedelta, maximum: timedelta) -> None:
    """Refuse a time to live above ``maximum`` (TASKFLOW_TOKEN_MAX_TTL)."""
    if ttl > maximum:
        raise errors.ValidationError(
            f"A token may live at most {_span(maximum)} (TASKFLOW_TOKEN_MAX_TTL); "
            f"{_span(ttl)} was asked. Pass a shorter --ttl, or raise the maximum.",
            field="ttl",
        )


def _span(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0 and seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def parse_ttl(text: str) -> timedelta:
    """Parse a time to live such as ``90m``, ``8h``, ``30d`` or ``1w``."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    text = text.strip().lower()
    if len(text) >= 2 and text[-1] in units and text[:-1].isdigit():
        return timedelta(seconds=int(text[:-1]) * units[text[-1]])
    raise errors.ValidationError(
        f"time to live {text!r} is not understood: write a number and a unit, e.g. 90m, 8h, 30d."
    )
