"""Durations in words for people (``2d 4h``, ``3h 20m``, ``45s``), and in microseconds,
the unit the database keeps them in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

#: One microsecond: ``delta // US`` is a duration in whole µs.
US = timedelta(microseconds=1)
#: The instant µs are counted from (as PostgreSQL's ``extract(epoch ...)``).
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_us(t: datetime) -> int:
    """Instant ``t`` (aware) in µs since 1970, as the SQL ``business_sql.epoch_us`` gives it."""
    return (t - EPOCH) // US


def words(seconds: int, *, seconds_with_hours: bool, zero: str) -> str:
    """The days, hours and minutes of ``seconds`` that are not zero, largest first.

    Seconds are shown only under a day, and with ``seconds_with_hours`` false
    only under an hour (a report column reads ``3h 20m``, a clock's timeline
    ``3h 20m 5s``). ``zero`` is the text for no time at all.
    """
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days}d"] if days else []
    if hours:
        parts.append(f"{hours}h")
    if minutes:
        parts.append(f"{minutes}m")
    if secs and not days and (seconds_with_hours or not hours):
        parts.append(f"{secs}s")
    return " ".join(parts) or zero
