"""Building calendars from parsed tables: one, a folder's worth, or a plain mapping.

Files are read by the shell (``taskflow.service.clocks.calendar_files``); the core only
validates and resolves the tables it is given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import PurePath
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from taskflow.core.clocks.calendars import errors, ics, model, versions
from taskflow.core.clocks.calendars.calendar import Calendar
from taskflow.core.clocks.calendars.files import KEYS, Reader


def build_spec(
    data: Mapping[str, Any],
    source: str,
    parent: model.CalendarSpec | None = None,
    prefix: str = "",
) -> model.CalendarSpec:
    """Validate one calendar's table (``parent`` resolved already if it inherits).

    ``prefix`` is where the table sits in its file (``versions[1].``), for errors.
    """
    reader = Reader(source, prefix)
    reader.unknown(None, data, KEYS)
    name = reader.text(data, "name", '"uk-london"') or PurePath(source).stem
    inherits = reader.text(data, "inherits", '"uk-london"')
    if inherits is not None and parent is None:
        raise reader.fail("inherits", f"calendar {inherits!r} must be loaded first")
    zone = reader.text(data, "timezone", '"Europe/London"')
    if zone is None:
        if parent is None:
            raise reader.fail(
                "timezone", 'is required: write timezone = "Europe/London" (an IANA zone)'
            )
        zone = parent.timezone
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise reader.fail(
            "timezone", f'{zone!r} is not an IANA time zone: write e.g. "Europe/London"'
        ) from None
    week: dict[int, tuple[model.Window, ...]] = dict(enumerate(parent.week)) if parent else {}
    if "week" in data:
        week.update(reader.week(data["week"]))
    elif parent is None:
        raise reader.fail("week", 'is required: write [week] then mon-fri = ["09:00-17:30"]')
    holidays = parent.holidays if parent else None
    if "holidays" in data:
        holidays = reader.holidays(data["holidays"])
    mode = data.get("holiday_mode", parent.holiday_mode if parent else "remove-date")
    if mode not in model.HOLIDAY_MODES:
        raise reader.fail(
            "holiday_mode",
            f'{mode!r} is not a mode: write "remove-date" (default) or "cancel-shift"',
        )
    closures = list(parent.closures) if parent else []
    for index, item in enumerate(reader.entries("closures", data.get("closures", []))):
        closures.append(reader.closure(f"closures[{index}]", item))
    for index, item in enumerate(reader.entries("ics", data.get("ics", []))):
        closures.extend(_ics_closures(reader, f"ics[{index}]", item, zone))
    working = list(parent.working_days) if parent else []
    for index, item in enumerate(reader.entries("working_days", data.get("working_days", []))):
        working.append(reader.working_day(f"working_days[{index}]", item))
    description = reader.text(data, "description", '"London office"') or ""
    return model.CalendarSpec(
        name=name,
        timezone=zone,
        week=tuple(week.get(day, ()) for day in range(7)),
        holidays=holidays,
        holiday_mode=mode,
        closures=tuple(closures),
        working_days=tuple(working),
        description=description,
        source=source,
        inherits=inherits,
    )


def _ics_closures(
    reader: Reader, key: str, item: Mapping[str, Any], zone: str
) -> tuple[model.Closure, ...]:
    """Closures from an ``[[ics]]`` entry, whose file the shell has read into ``content``."""
    reader.unknown(key, item, {"file", "content"})
    file = reader.text(item, "file", '"uk-closures.ics"') or "<inline ics>"
    content = item.get("content")
    if not isinstance(content, str):
        raise reader.fail(
            f"{key}.file",
            "the ICS file was not read: load the calendar from its folder "
            "(taskflow calendar check), with the .ics file beside the .toml",
        )
    return ics.closures(content, file, ZoneInfo(zone))


def build_versions(
    data: Mapping[str, Any], source: str, parent: tuple[versions.Version, ...] | None = None
) -> tuple[versions.Version, ...]:
    """Every version of one calendar table, over its parent's versions if it inherits."""
    if parent is None:
        return versions.build(data, source, build_spec(data, source), build_spec)
    return versions.over_parent(data, source, parent, build_spec)


def from_dict(
    data: Mapping[str, Any], *, source: str = "<dict>", parent: Calendar | None = None
) -> Calendar:
    """A calendar from a table shaped like a calendar file (tests, previews)."""
    return Calendar.of(build_versions(data, source, parent.versions if parent else None))


class Registry:
    """Calendars by name, as loaded from a folder."""

    def __init__(self, calendars: Mapping[str, Calendar]) -> None:
        self._by_name = dict(calendars)

    def get(self, name: str) -> Calendar:
        """The calendar called ``name``; ``UnknownCalendar`` lists the known names."""
        try:
            return self._by_name[name]
        except KeyError:
            raise errors.UnknownCalendar(name, self._by_name) from None

    def adopt(self, other: Registry) -> None:
        """Serve ``other``'s calendars from now on, in one assignment: a reader sees every
        calendar as before or every one as after, never a mix (a reload without restart)."""
        self._by_name = dict(other._by_name)

    def names(self) -> frozenset[str]:
        """The names of every loaded calendar."""
        return frozenset(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Calendar]:
        return iter(sorted(self._by_name.values(), key=lambda calendar: calendar.name))

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return f"<Registry {sorted(self._by_name)}>"


class Tables:
    """Resolves names (and ``inherits``) among calendar tables already read by the shell.

    ``tables`` maps each source (a file path, as text) to its parsed TOML table;
    the core never reads files (``taskflow.service.clocks.calendar_files`` does).
    """

    def __init__(self, folder: str, tables: Mapping[str, Mapping[str, Any]]) -> None:
        self.folder = folder
        self.tables: dict[str, tuple[str, Mapping[str, Any]]] = {}
        self.specs: dict[str, tuple[versions.Version, ...]] = {}
        for source, data in tables.items():
            self.add(source, data)

    def add(self, source: str, data: Mapping[str, Any]) -> str:
        """Register one table under its name; two tables may not share a name."""
        name = data.get("name", PurePath(source).stem)
        if not isinstance(name, str) or not name.strip():
            raise errors.CalendarFileError(
                source, "name", 'must be a non-empty string, e.g. name = "uk-london"'
            )
        name = name.strip()
        if name in self.tables and self.tables[name][0] != source:
            raise errors.CalendarFileError(
                source,
                "name",
                f"{name!r} is also the name of {self.tables[name][0]}: names must be unique",
            )
        self.tables[name] = (source, data)
        return name

    def spec(self, name: str, chain: tuple[str, ...] = ()) -> tuple[versions.Version, ...]:
        """The validated versions of ``name``, its parents resolved first."""
        if name in self.specs:
            return self.specs[name]
        source, data = self.tables[name]
        if name in chain:
            raise errors.CalendarFileError(
                source, "inherits", f"inheritance cycle: {' -> '.join((*chain, name))}"
            )
        parent = None
        inherits = data.get("inherits")
        if isinstance(inherits, str) and inherits.strip():
            parent_name = inherits.strip()
            if parent_name not in self.tables:
                raise errors.CalendarFileError(
                    source,
                    "inherits",
                    f"no calendar named {parent_name!r} in {self.folder}; known: "
                    f"{', '.join(sorted(self.tables)) or '(none)'}",
                )
            parent = self.spec(parent_name, (*chain, name))
        found = build_versions(data, source, parent)
        self.specs[name] = found
        return found

    def calendar(self, name: str) -> Calendar:
        """The calendar called ``name``."""
        return Calendar.of(self.spec(name))

    def registry(self) -> Registry:
        """Every table, validated, by name."""
        return Registry({name: self.calendar(name) for name in sorted(self.tables)})
