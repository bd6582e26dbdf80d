"""Effective-dated calendars: a calendar's definitions, each in force from an instant.

A calendar file's top-level table is its first version, in force since always;
each ``[[versions]]`` entry changes it from ``effective`` on, the way
``inherits`` changes a parent (named weekdays replace, ``[holidays]`` replaces,
closures and working days add up). Working time is then piecewise: before a
version's instant the previous definition counts, from it on the new one, so
an edit effective next month leaves every earlier instant's arithmetic as it was.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from taskflow.core.clocks.calendars import errors, model, timeline
from taskflow.core.clocks.calendars.files import VERSION_KEYS, Reader

#: Builds one definition from its table over the definition before it (``registry.build_spec``).
SpecBuilder = Callable[
    [Mapping[str, Any], str, "model.CalendarSpec | None", str], "model.CalendarSpec"
]


@dataclass(frozen=True)
class Version:
    """One definition of a calendar and the instant it takes effect (``None``: since always)."""

    effective: datetime | None
    spec: model.CalendarSpec
    #: Where it is written: ``""`` for the top-level table, else ``versions[i]``.
    key: str = ""
    description: str = ""

    @property
    def effective_us(self) -> int | None:
        """``effective`` as µs since 1970 (``None`` for the first version)."""
        return (
            None if self.effective is None else (self.effective - timeline.EPOCH) // timeline.ONE_US
        )


def effective(reader: Reader, key: str, value: Any, tz: ZoneInfo) -> datetime:
    """A version's instant: a TOML date (local midnight), local datetime, or offset datetime."""
    if isinstance(value, datetime):
        if value.utcoffset() is None:
            value = value.replace(tzinfo=tz)  # local wall time in the calendar's zone, fold=0
        instant: datetime = value.astimezone(tz)
        return instant
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=tz)
    raise reader.fail(
        key,
        "must be a TOML date or datetime without quotes: effective = 2027-03-01 (local "
        "midnight) or effective = 2027-03-01T09:00:00Z",
    )


def build(
    data: Mapping[str, Any],
    source: str,
    base: model.CalendarSpec,
    builder: SpecBuilder,
) -> tuple[Version, ...]:
    """Every version of one calendar table: the base first, then ``[[versions]]`` in order.

    Refuses a version that is not strictly later than the one before it (two
    definitions would be in force at once), naming the entry.
    """
    out = [Version(None, base, "", base.description)]
    entries = data.get("versions", [])
    if not isinstance(entries, list) or not all(isinstance(item, dict) for item in entries):
        raise errors.CalendarFileError(
            source,
            "versions",
            "must be an array of tables: write [[versions]] then effective = 2027-03-01",
        )
    tz = ZoneInfo(base.timezone)
    for index, item in enumerate(entries):
        key = f"versions[{index}]"
        reader = Reader(source, f"{key}.")
        reader.unknown(None, item, VERSION_KEYS)
        if "effective" not in item:
            raise reader.fail("effective", "is required: write effective = 2027-03-01")
        when = effective(reader, "effective", item["effective"], tz)
        before = out[-1].effective
        if before is not None and when <= before:
            raise reader.fail(
                "effective",
                f"{when.isoformat()} is not after {out[-1].key}'s {before.isoformat()}: two "
                "versions would be in force at once. List versions in order, each effective "
                "later than the one before.",
            )
        table = {k: v for k, v in item.items() if k != "effective"}
        spec = _named(builder(table, source, out[-1].spec, f"{key}."), base)
        out.append(
            Version(when, spec, key, reader.text(item, "description", '"summer hours"') or "")
        )
    return tuple(out)


def in_force(versions: Sequence[Version], when: datetime | None) -> Version:
    """The version in force at ``when`` (``None``: the first)."""
    found = versions[0]
    for version in versions[1:]:
        if when is None or version.effective is None or version.effective > when:
            break
        found = version
    return found


def over_parent(
    data: Mapping[str, Any], source: str, parent: Sequence[Version], builder: SpecBuilder
) -> tuple[Version, ...]:
    """An inheriting calendar's versions: its own chain over the parent's, one per change of either.

    From each instant where the parent or the child changes, the child's table
    and its versions in force by then are applied over the parent's definition in force.
    """
    own = build(data, source, builder(data, source, parent[0].spec, ""), builder)
    if len(parent) == 1:
        return own
    entries = data.get("versions", [])
    edges = sorted({v.effective for v in (*own[1:], *parent[1:]) if v.effective is not None})
    out = [own[0]]
    for when in edges:
        spec = builder(data, source, in_force(parent, when).spec, "")
        for version, item in zip(own[1:], entries, strict=True):
            if version.effective is not None and version.effective <= when:
                table = {k: v for k, v in item.items() if k != "effective"}
                spec = _named(builder(table, source, spec, f"{version.key}."), own[0].spec)
        named = in_force(own, when)
        if named.effective != when:
            named = in_force(parent, when)
        out.append(Version(when, spec, named.key, named.description))
    return tuple(out)


def _named(spec: model.CalendarSpec, base: model.CalendarSpec) -> model.CalendarSpec:
    """A version's definition under its calendar's name (a version table names nothing)."""
    return replace(spec, name=base.name, inherits=base.inherits, description=base.description)


def first_change(
    old: Sequence[Version], new: Sequence[Version]
) -> tuple[datetime | None, Version] | None:
    """The earliest instant from which ``new`` computes differently from ``old``.

    ``None`` when they agree everywhere; else ``(instant, version)`` with the
    version of ``new`` (or of ``old``, when one was removed) in force there;
    ``instant`` is ``None`` when they differ since always.
    """
    for a, b in itertools.zip_longest(old, new):
        if a is None:
            return b.effective, b
        if b is None:
            return a.effective, a
        if a.effective != b.effective or _counts(a.spec) != _counts(b.spec):
            found = [v.effective for v in (a, b) if v.effective is not None]
            when = min(found) if len(found) == 2 else None
            return when, b
    return None


def _counts(spec: model.CalendarSpec) -> tuple[object, ...]:
    """What working time depends on (not the name, file or description)."""
    return (
        spec.timezone,
        spec.week,
        spec.holidays,
        spec.holiday_mode,
        spec.closures,
        spec.working_days,
    )


def check_edit(
    old: Sequence[Version], new: Sequence[Version], now: datetime, window: timedelta
) -> datetime | None:
    """Refuse an edit that changes working time before ``now - window``; the first change.

    Past SLA outcomes are kept by never changing the arithmetic of instants
    already measured: a new or edited version must take effect at most
    ``window`` ago.
    """
    found = first_change(old, new)
    if found is None:
        return None
    when, version = found
    horizon = now - window
    if when is None or when < horizon:
        since = "since always" if when is None else f"from {when.isoformat()}"
        raise errors.CalendarFileError(
            version.spec.source,
            version.key or None,
            f"this edit changes working time {since}, more than {window} before now "
            f"({now.isoformat()}): past SLA outcomes would change. Add a [[versions]] entry "
            f"effective {horizon.isoformat()} or later instead.",
            effective=None if when is None else when.isoformat(),
        )
    return when
