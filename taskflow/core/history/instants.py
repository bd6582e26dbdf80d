"""Which instants a question about the past may name: not in the future, and not before
the oldest ended runs still kept (retention prunes ended runs; ``core/operate/retention.py``).

Pure: the caller gives ``now`` and how long the runs asked about are kept.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from taskflow import errors
from taskflow.core.common import refusals
from taskflow.core.operate import retention


def check(at: datetime, *, now: datetime, kept: timedelta | None, field: str = "at") -> None:
    """Refuse ``at`` when it is later than ``now`` (INVALID_INPUT) or earlier than the runs
    kept (``OutsideRetention``, naming the retention); ``kept`` None: runs are kept for ever."""
    if at.tzinfo is None:
        raise errors.ValidationError(f"{field} needs a time zone offset.", field=field)
    if at > now:
        raise errors.ValidationError(
            f"{field} is in the future ({at.isoformat()}); ask about an instant up to now.",
            field=field,
        )
    if kept is not None and at < retention.cutoff(now, kept):
        days, earliest = retention.days(kept), retention.cutoff(now, kept).isoformat()
        raise refusals.OutsideRetention(
            f"Ended runs are kept {days} days: instants before {earliest} cannot be answered. "
            "Ask about a later instant.",
            retention_days=days,
            earliest=earliest,
            field=field,
        )


def shortest(ages: list[timedelta | None]) -> timedelta | None:
    """The shortest of several retentions (None for kept for ever), for a question spanning
    several workflows: an instant past any of them could miss pruned runs."""
    found = [a for a in ages if a is not None]
    return min(found) if found else None
