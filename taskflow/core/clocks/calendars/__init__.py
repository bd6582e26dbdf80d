"""Business-hours calendars: exact, fast business-time arithmetic.

Public names (other code does ``from taskflow.core import calendars``):
``from_dict``, ``Tables``, ``Registry``, ``Calendar``,
``REAL_TIME``, ``BusinessClock``, ``Explanation`` and the errors.

Conventions (see docs/calendars.md):

* windows are half-open ``[open, close)``, read in local wall time, and a
  window that crosses midnight belongs to the day it opens on;
* durations are measured on the absolute time line (a DST night shift is 7 or
  9 hours long);
* wall times skipped or repeated by a DST change resolve as RFC 5545 says: a
  skipped time moves forward by the gap, a repeated one takes the earlier instant;
* a holiday removes its whole local date by default (``holiday_mode =
  "remove-date"``), or cancels the shifts that start on it (``"cancel-shift"``);
* budgets are integer microseconds; a budget ending exactly at a close is due
  at that close; a start outside working time accrues from the next opening;
  ``add(start, 0) == start``; results are in the calendar's zone;
* datetimes must be aware (``NaiveDatetime`` otherwise).

Files are read by the shell: ``taskflow.service.clocks.calendar_files.load`` / ``load_folder``.
"""

from __future__ import annotations

from taskflow.core.clocks.calendars.calendar import MAX_BUDGET, MAX_YEAR, MIN_YEAR, Calendar
from taskflow.core.clocks.calendars.errors import (
    BudgetOutOfRange,
    CalendarError,
    CalendarFileError,
    NaiveDatetime,
    NeverCloses,
    NoWorkingTime,
    UnknownCalendar,
)
from taskflow.core.clocks.calendars.explain import Consumed, Explanation, Skipped
from taskflow.core.clocks.calendars.model import CalendarSpec, DayPlan, Window
from taskflow.core.clocks.calendars.realtime import REAL_TIME, BusinessClock, RealTime
from taskflow.core.clocks.calendars.registry import Registry, Tables, from_dict

__all__ = [
    "MAX_BUDGET",
    "MAX_YEAR",
    "MIN_YEAR",
    "REAL_TIME",
    "BudgetOutOfRange",
    "BusinessClock",
    "Calendar",
    "CalendarError",
    "CalendarFileError",
    "CalendarSpec",
    "Consumed",
    "DayPlan",
    "Explanation",
    "NaiveDatetime",
    "NeverCloses",
    "NoWorkingTime",
    "RealTime",
    "Registry",
    "Skipped",
    "Tables",
    "UnknownCalendar",
    "Window",
    "from_dict",
]
