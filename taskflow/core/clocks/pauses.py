"""The intervals a clock stood (or will stand) still, as its ledger keeps them: an operator's
pause (no end until resumed) and a holder's leave (its end known ahead); docs/sla.md."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Pause:
    """An interval the clock stood still; ``end`` is None while it still stands."""

    start: datetime
    end: datetime | None = None


def ordered(pauses: Iterable[Pause], *, whole: bool = False) -> tuple[Pause, ...]:
    """Pauses by start, overlapping or touching ones joined; a pause with no end is kept
    apart from the leave after it (its resume must not lose that), unless ``whole`` (each
    instant paused once, for counting)."""
    out: list[Pause] = []
    for p in sorted(pauses, key=lambda p: p.start):
        last = out[-1] if out else None
        if last is None or (last.end is not None and p.start > last.end):
            out.append(p)
        elif last.end is None or (p.end is None and not whole):
            if not whole:
                out.append(p)
        else:
            out[-1] = Pause(last.start, None if p.end is None else max(last.end, p.end))
    return tuple(out)


def until(pauses: Iterable[Pause], now: datetime) -> tuple[Pause, ...]:
    """The pauses as facts up to ``now``: those after it dropped, one across it cut there."""
    return tuple(
        Pause(p.start, now if p.end is not None and p.end > now else p.end)
        for p in pauses
        if p.start < now or p.end is None
    )


def ahead(leave: Iterable[tuple[datetime, datetime]], now: datetime) -> tuple[Pause, ...]:
    """The pauses a leave ``[from, to)`` makes from ``now`` on."""
    return tuple(Pause(max(a, now), b) for a, b in leave if b > now)


def through_leave(
    pauses: tuple[Pause, ...], leave: Iterable[tuple[datetime, datetime]], now: datetime
) -> tuple[Pause, ...]:
    """A clock's pauses standing still through its holder's leave from ``now`` on
    (docs/sla.md, "A holder's leave"): what stood still before ``now`` stays as it was; from
    ``now`` the pauses are the leave intervals given (none: no leave, or no holder)."""
    return ordered((*until(pauses, now), *ahead(leave, now)))
