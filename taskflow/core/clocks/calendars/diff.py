"""What differs between two effective-dated calendars, version by version, in words."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from taskflow.core.clocks.calendars import model, versions


def _holidays(spec: model.CalendarSpec) -> str:
    source = spec.holidays
    if source is None:
        return "none"
    return "/".join(filter(None, (source.country, source.subdivision)))


def spec_changes(a: model.CalendarSpec, b: model.CalendarSpec) -> list[str]:
    """Lines naming what ``b`` changes from ``a`` (week, holidays, mode, closures, extra days)."""
    out = []
    for day in range(7):
        if a.week[day] != b.week[day]:
            before = " ".join(str(w) for w in a.week[day]) or "closed"
            after = " ".join(str(w) for w in b.week[day]) or "closed"
            out.append(f"{model.WEEKDAYS[day]}: {before} -> {after}")
    if a.holidays != b.holidays:
        out.append(f"holidays: {_holidays(a)} -> {_holidays(b)}")
    if a.holiday_mode != b.holiday_mode:
        out.append(f"holiday_mode: {a.holiday_mode} -> {b.holiday_mode}")
    gone = [c for c in a.closures if c not in b.closures]
    new = [c for c in b.closures if c not in a.closures]
    out += [f"- closure {c.when} ({c.reason})" for c in gone[:20]]
    out += [f"+ closure {c.when} ({c.reason})" for c in new[:20]]
    if len(gone) > 20 or len(new) > 20:
        out.append(f"  ({len(gone)} closure(s) removed, {len(new)} added in all)")
    out += [
        f"- working day {w.when} ({w.reason})" for w in a.working_days if w not in b.working_days
    ]
    out += [
        f"+ working day {w.when} ({w.reason})" for w in b.working_days if w not in a.working_days
    ]
    return out


def _since(version: versions.Version) -> str:
    return "since always" if version.effective is None else f"from {version.effective.isoformat()}"


def lines(old: Sequence[versions.Version], new: Sequence[versions.Version]) -> list[str]:
    """The version-by-version difference of ``old`` and ``new``, for ``taskflow calendar diff``.

    A version only ``new`` has is described by what it changes from the one before it.
    """
    out = []
    before: versions.Version | None = None
    for a, b in itertools.zip_longest(old, new):
        if a is None:
            out.append(f"+ version {_since(b)} ({b.key})")
            out += [f"    {line}" for line in spec_changes(before.spec, b.spec)] if before else []
        elif b is None:
            out.append(f"- version {_since(a)} ({a.key or 'top level'})")
        else:
            changes = spec_changes(a.spec, b.spec)
            if a.effective != b.effective:
                changes.insert(0, f"effective: {_since(a)} -> {_since(b)}")
            mark = "~" if changes else "="
            out.append(f"{mark} version {_since(b)} ({b.key or 'top level'})")
            out += [f"    {line}" for line in changes]
        before = b if b is not None else before
    return out
