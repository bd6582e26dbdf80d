"""Durations in words for people: ``2d 4h``, ``3h 20m``, ``45s``."""

from __future__ import annotations


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
