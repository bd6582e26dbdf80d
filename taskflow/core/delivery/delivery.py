"""Delivering notifications: the states a notification goes through, retries and their backoff.

A sender (the worker's e-mail step, or an outside mailer through GraphQL) *takes*
deliverable notifications for a lease: ``pending`` ones, ``failed`` ones whose
``retry_at`` has come, and ``sending`` ones whose lease ran out (their sender
died). While leased a notification is ``sending``; its sender then marks it
``sent``, or ``failed`` (temporary: taken again after a backoff) or ``dead``
(permanent, or ``max_attempts`` takes used up). Pure: the caller passes ``now``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from taskflow import errors
from taskflow.core.common import refusals


class DeliveryState(StrEnum):
    PENDING = "pending"
    SENDING = "sending"
    SENT = "sent"
    FAILED = "failed"
    DEAD = "dead"


#: States a sender may take (``sending`` only once its lease ran out).
TAKEABLE = (DeliveryState.PENDING, DeliveryState.FAILED, DeliveryState.SENDING)

#: Lease bounds for ``takeNotifications`` (seconds) and the default.
LEASE_DEFAULT = 300
LEASE_MIN = 10
LEASE_MAX = 3600
#: The most notifications one take may claim.
TAKE_MAX = 100
#: Takes after which a temporary failure is final (the notification is dead).
MAX_ATTEMPTS = 8
#: The first retry's wait and the cap of the doubling backoff.
BACKOFF_BASE = timedelta(minutes=1)
BACKOFF_MAX = timedelta(hours=1)
#: Longest last_error kept (the rest is cut).
ERROR_CHARS = 500


#: The caller's lease on a notification ran out and it was taken again, or it was already
#: marked: the caller must not mark it (another sender owns it now).
LeaseLost = refusals.LeaseLost


def backoff(attempts: int) -> timedelta:
    """The wait before the next take after ``attempts`` takes (1 min, 2, 4, ... at most 1 h)."""
    step: timedelta = BACKOFF_BASE * int(2 ** max(0, min(attempts - 1, 20)))
    return min(step, BACKOFF_MAX)


def after_failure(
    attempts: int, permanent: bool, now: datetime, max_attempts: int = MAX_ATTEMPTS
) -> tuple[DeliveryState, datetime | None]:
    """The state after a failed send, and when it may be taken again (None: never)."""
    if permanent or attempts >= max_attempts:
        return DeliveryState.DEAD, None
    return DeliveryState.FAILED, now + backoff(attempts)


def short_error(text: str) -> str:
    """An error as kept on the notification: one line, at most ``ERROR_CHARS``."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= ERROR_CHARS else one_line[: ERROR_CHARS - 1] + "…"


def smtp_permanent(code: int | None) -> bool:
    """An SMTP reply code that retrying will not fix (5xx); 4xx and no reply are temporary."""
    return code is not None and 500 <= code < 600


def check_lease_seconds(seconds: int) -> timedelta:
    """A lease length from the API, checked."""
    if not LEASE_MIN <= seconds <= LEASE_MAX:
        raise errors.ValidationError(
            f"leaseSeconds must be between {LEASE_MIN} and {LEASE_MAX}: take a lease long "
            "enough to send the batch, and take again for more.",
            field="leaseSeconds",
        )
    return timedelta(seconds=seconds)


def check_take_limit(limit: int) -> int:
    if not 1 <= limit <= TAKE_MAX:
        raise errors.ValidationError(
            f"limit must be between 1 and {TAKE_MAX}: take a smaller batch, more often.",
            field="limit",
        )
    return limit
