"""Validation of one calendar file's TOML table, with errors naming file, key and fix."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from taskflow.core.clocks.calendars import errors, model

KEYS = frozenset(
    {
        "name",
        "description",
        "timezone",
        "inherits",
        "week",
        "holidays",
        "holiday_mode",
        "closures",
        "working_days",
        "versions",
        "ics",
    }
)
#: Keys a ``[[versions]]`` entry may give: what can change from an instant on.
VERSION_KEYS = frozenset(
    {
        "effective",
        "description",
        "week",
        "holidays",
        "holiday_mode",
        "closures",
        "working_days",
        "ics",
    }
)
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")
_EXAMPLE_WEEK = 'mon-fri = ["09:00-17:30"]'


class Reader:
    """Validates one file's table, raising ``CalendarFileError`` that names file and key."""

    def __init__(self, source: str, prefix: str = "") -> None:
        self.source = source
        #: Where the table sits in the file (``versions[1].``): errors name the full key.
        self.prefix = prefix

    def fail(self, key: str | None, problem: str) -> errors.CalendarFileError:
        full = self.prefix.rstrip(".") or None if key is None else f"{self.prefix}{key}"
        return errors.CalendarFileError(self.source, full, problem)

    def text(self, data: Mapping[str, Any], key: str, example: str) -> str | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string, e.g. {key} = {example}")
        return value.strip()

    def seconds(self, key: str, text: str, *, allow_24: bool) -> int:
        match = _TIME.match(text.strip())
        if match is None:
            raise self.fail(key, f"{text!r} is not a time of day: write HH:MM, e.g. 09:00")
        hours, minutes, secs = int(match[1]), int(match[2]), int(match[3] or 0)
        value = hours * 3600 + minutes * 60 + secs
        if minutes > 59 or secs > 59 or value > model.DAY or (value == model.DAY and not allow_24):
            raise self.fail(key, f"{text!r} is not a time of day between 00:00 and 24:00")
        return value

    def window(self, key: str, text: Any) -> model.Window:
        if not isinstance(text, str) or text.count("-") != 1:
            raise self.fail(
                key, f'{text!r} is not a window: write "HH:MM-HH:MM", e.g. "09:00-17:30"'
            )
        left, right = text.split("-")
        opens = self.seconds(key, left, allow_24=False)
        closes = self.seconds(key, right, allow_24=True)
        if closes == opens:
            raise self.fail(
                key,
                f"window {text!r} opens and closes at the same time: for a whole day "
                'write "00:00-24:00"',
            )
        if closes < opens:
            closes += model.DAY  # crosses midnight: belongs to the day it opens on
        return model.Window(opens, closes)

    def windows(self, key: str, value: Any) -> tuple[model.Window, ...]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise self.fail(
                key, f'must be a list of windows, e.g. {key} = ["09:00-12:30", "13:30-17:30"]'
            )
        out = sorted(self.window(key, item) for item in value)
        for before, after in itertools.pairwise(out):
            if after.open < before.close:
                raise self.fail(key, f"windows {before} and {after} overlap: merge them into one")
        return tuple(out)

    def week(self, value: Any) -> dict[int, tuple[model.Window, ...]]:
        if not isinstance(value, dict):
            raise self.fail("week", f"must be a table, e.g. [week] then {_EXAMPLE_WEEK}")
        out: dict[int, tuple[model.Window, ...]] = {}
        for key, windows in value.items():
            days = self.days(f"week.{key}", key)
            parsed = self.windows(f"week.{key}", windows)
            for day in days:
                if day in out:
                    raise self.fail(
                        f"week.{key}", f"{model.WEEKDAYS[day]} is given twice in [week]"
                    )
                out[day] = parsed
        return out

    def days(self, key: str, text: str) -> list[int]:
        names = text.lower().split("-")
        if len(names) in (1, 2) and all(name in model.WEEKDAYS for name in names):
            first = model.WEEKDAYS.index(names[0])
            last = model.WEEKDAYS.index(names[-1])
            if first <= last:
                return list(range(first, last + 1))
        raise self.fail(
            key, "is not a weekday or range: use mon, tue, ..., sun or a range like mon-fri"
        )

    def date_rule(self, key: str, item: Mapping[str, Any]) -> model.DateRule:
        on = item.get("date")
        if on is not None:
            if not isinstance(on, date) or hasattr(on, "hour"):
                raise self.fail(
                    f"{key}.date", "must be a TOML date without quotes, e.g. date = 2026-12-24"
                )
            if any(k in item for k in ("month", "day", "weekday", "nth")):
                raise self.fail(
                    key, "give either date, or month with day (or weekday and nth), not both"
                )
            return model.DateRule(on=on)
        month = item.get("month")
        if not isinstance(month, int) or not 1 <= month <= 12:
            raise self.fail(
                key,
                "needs date = YYYY-MM-DD, or a yearly rule: month = 1..12 with day = 1..31, "
                'or weekday = "thu" and nth = 1..5 or -1 (last)',
            )
        offset = item.get("offset_days", 0)
        if not isinstance(offset, int) or abs(offset) > 31:
            raise self.fail(
                f"{key}.offset_days", "must be a whole number of days between -31 and 31"
            )
        if "day" in item:
            day = item["day"]
            if not isinstance(day, int) or not 1 <= day <= 31 or "weekday" in item:
                raise self.fail(f"{key}.day", "must be a day of the month 1..31 (and no weekday)")
            return model.DateRule(month=month, day=day, offset_days=offset)
        weekday = item.get("weekday")
        nth = item.get("nth")
        if not isinstance(weekday, str) or weekday.lower() not in model.WEEKDAYS:
            raise self.fail(f"{key}.weekday", "must be one of mon, tue, wed, thu, fri, sat, sun")
        if not isinstance(nth, int) or nth not in (1, 2, 3, 4, 5, -1):
            raise self.fail(f"{key}.nth", "must be 1..5, or -1 for the last such weekday")
        return model.DateRule(
            month=month, weekday=model.WEEKDAYS.index(weekday.lower()), nth=nth, offset_days=offset
        )

    def entries(self, key: str, value: Any) -> list[Mapping[str, Any]]:
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise self.fail(
                key, f"must be an array of tables: write [[{key}]] then date = 2026-12-24"
            )
        return value

    def closure(self, key: str, item: Mapping[str, Any]) -> model.Closure:
        allowed = {
            "date",
            "month",
            "day",
            "weekday",
            "nth",
            "offset_days",
            "hours",
            "closes_at",
            "reason",
        }
        self.unknown(key, item, allowed)
        when = self.date_rule(key, item)
        if "hours" in item and "closes_at" in item:
            raise self.fail(key, "give hours (replacing the day's windows) or closes_at, not both")
        hours = self.windows(f"{key}.hours", item["hours"]) if "hours" in item else None
        closes_at = None
        if "closes_at" in item:
            if not isinstance(item["closes_at"], str):
                raise self.fail(f"{key}.closes_at", 'must be a time, e.g. closes_at = "13:00"')
            closes_at = self.seconds(f"{key}.closes_at", item["closes_at"], allow_24=False)
        reason = self.text(item, "reason", '"Christmas Eve"') or "closure"
        return model.Closure(when=when, reason=reason, hours=hours, closes_at=closes_at)

    def working_day(self, key: str, item: Mapping[str, Any]) -> model.WorkingDay:
        self.unknown(
            key, item, {"date", "month", "day", "weekday", "nth", "offset_days", "hours", "reason"}
        )
        when = self.date_rule(key, item)
        if "hours" not in item:
            raise self.fail(key, 'needs the hours worked, e.g. hours = ["09:00-17:30"]')
        hours = self.windows(f"{key}.hours", item["hours"])
        reason = self.text(item, "reason", '"stocktake"') or "extra working day"
        return model.WorkingDay(when=when, hours=hours, reason=reason)

    def holidays(self, value: Any) -> model.HolidaySource | None:
        if not isinstance(value, dict):
            raise self.fail("holidays", 'must be a table: [holidays] then country = "GB"')
        self.unknown("holidays", value, {"country", "subdivision", "categories", "ignore"})
        country = value.get("country")
        if country is None or country == "":
            return None  # an inheriting calendar may drop its parent's holidays
        if not isinstance(country, str):
            raise self.fail("holidays.country", 'must be an ISO country code, e.g. country = "GB"')
        subdivision = value.get("subdivision")
        if subdivision is not None and not isinstance(subdivision, str):
            raise self.fail("holidays.subdivision", 'must be a string, e.g. subdivision = "ENG"')
        categories = value.get("categories")
        if categories is not None and (
            not isinstance(categories, list) or not all(isinstance(c, str) for c in categories)
        ):
            raise self.fail("holidays.categories", 'must be a list of strings, e.g. ["public"]')
        ignore = value.get("ignore", [])
        if not isinstance(ignore, list) or not all(isinstance(n, str) for n in ignore):
            raise self.fail(
                "holidays.ignore", 'must be a list of holiday names, e.g. ["Boxing Day"]'
            )
        source = model.HolidaySource(
            country=country.upper(),
            subdivision=subdivision,
            categories=tuple(categories) if categories is not None else None,
            ignore=frozenset(ignore),
        )
        self.check_holidays(source)
        return source

    def check_holidays(self, source: model.HolidaySource) -> None:
        import holidays as holidays_package

        kwargs: dict[str, Any] = {"subdiv": source.subdivision, "years": []}
        if source.categories:
            kwargs["categories"] = source.categories
        try:
            holidays_package.country_holidays(source.country, **kwargs)
        except (NotImplementedError, ValueError, KeyError) as exc:
            raise self.fail(
                "holidays",
                f"the holidays package rejects country={source.country!r} "
                f"subdivision={source.subdivision!r}: {exc}. Use an ISO 3166 country code "
                'and one of its subdivisions (python -c "import holidays; '
                f'print(holidays.{source.country}.subdivisions)").',
            ) from None

    def unknown(
        self, where: str | None, data: Mapping[str, Any], allowed: set[str] | frozenset[str]
    ) -> None:
        for key in data:
            if key not in allowed:
                full = key if where is None else f"{where}.{key}"
                raise self.fail(full, f"unknown key; allowed here: {', '.join(sorted(allowed))}")
