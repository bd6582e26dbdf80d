"""``taskflow calendar check | due | elapsed``: business-hours calendars from the shell.

These commands need no database and no secret: they read calendar files only.
"""

from __future__ import annotations

import argparse
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from taskflow import errors
from taskflow.config import config
from taskflow.core.clocks import calendars
from taskflow.service.clocks import calendar_files

_BUDGET = re.compile(
    r"^(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<m>\d+(?:\.\d+)?)m)?(?:(?P<s>\d+(?:\.\d+)?)s)?$"
)


def default_folder() -> Path:
    """``TASKFLOW_CALENDARS`` or the bundled ``calendars/`` (no ``config.load()``: no secret)."""
    return Path(os.environ.get("TASKFLOW_CALENDARS") or config.PROJECT_ROOT / "calendars")


def parse_budget(text: str) -> timedelta:
    """``8h``, ``90m``, ``1h30m``, ``45s``, ``1.5h`` or ``HH:MM[:SS]`` as a timedelta."""
    value = text.strip().lower()
    match = _BUDGET.match(value)
    if value and match and any(match.groupdict().values()):
        parts = {k: float(v) if v else 0.0 for k, v in match.groupdict().items()}
        try:
            budget = timedelta(hours=parts["h"], minutes=parts["m"], seconds=parts["s"])
        except OverflowError:
            raise errors.ValidationError(
                f"budget {text[:40]!r} is far too long: the longest budget is 100 years."
            ) from None
        # Whole microseconds, never float hours: round once, here at the edge.
        return timedelta(microseconds=round(budget / timedelta(microseconds=1)))
    clock = re.match(r"^(\d{1,9}):(\d{2})(?::(\d{2}))?$", value)
    if clock:
        return timedelta(hours=int(clock[1]), minutes=int(clock[2]), seconds=int(clock[3] or 0))
    raise errors.ValidationError(
        f"budget {text!r} is not a duration: write e.g. 8h, 90m, 1h30m, 45s or 08:30."
    )


def parse_instant(what: str, text: str) -> datetime:
    """An ISO 8601 instant that carries its offset (``2026-12-24T16:00+00:00`` or ``...Z``)."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise errors.ValidationError(
            f"{what} {text!r} is not an ISO 8601 datetime: write e.g. 2026-12-24T16:00+00:00."
        ) from None
    if value.utcoffset() is None:
        raise calendars.NaiveDatetime(what, text)
    return value


def find(name: str, folder: str | None) -> calendars.BusinessClock:
    """A calendar by name (from the folder), a ``.toml`` path, or ``real-time``."""
    if name == calendars.REAL_TIME.name:
        return calendars.REAL_TIME
    if name.endswith(".toml"):
        return calendar_files.load(name)
    return calendar_files.load_folder(folder or default_folder()).get(name)


def week_summary(spec: calendars.CalendarSpec) -> str:
    """``mon-fri 09:00-17:30`` style: runs of weekdays that share their windows."""
    runs: list[tuple[int, int, tuple[calendars.Window, ...]]] = []
    for day, windows in enumerate(spec.week):
        if runs and runs[-1][2] == windows and runs[-1][1] == day - 1:
            runs[-1] = (runs[-1][0], day, windows)
        else:
            runs.append((day, day, windows))
    names = calendars.model.WEEKDAYS
    return ", ".join(
        f"{names[a]}{'-' + names[b] if b > a else ''} {' '.join(str(w) for w in windows)}"
        for a, b, windows in runs
        if windows
    )


def _changes(calendar: calendars.Calendar, now: datetime) -> str:
    """``; 2 later version(s), next from ...`` (empty for a calendar of one version)."""
    later = [v.effective for v in calendar.versions[1:] if v.effective is not None]
    if not later:
        return ""
    coming = [when for when in later if when > now]
    upcoming = f", next from {coming[0].isoformat()}" if coming else ""
    return f"; {len(later)} later version(s){upcoming}"


def check(args: argparse.Namespace) -> int:
    target = Path(args.path) if args.path else default_folder()
    paths = sorted(target.glob("*.toml")) if target.is_dir() else [target]
    found: list[calendars.Calendar] = []
    failed = 0
    for path in paths:
        # Load each file on its own so one bad file does not hide the others.
        try:
            found.append(calendar_files.load(path))
        except calendars.CalendarError as exc:
            failed += 1
            print(f"FAIL [{exc.code}] {exc.message}")
    if target.is_dir() and not failed:
        calendar_files.load_folder(target)  # names unique across the folder
    now = datetime.now(UTC)  # the CLI may read the clock; the core never does
    for calendar in found:
        spec = calendar.spec
        week = week_summary(spec)
        holidays = "none"
        if spec.holidays:
            holidays = "/".join(filter(None, (spec.holidays.country, spec.holidays.subdivision)))
        extras = "".join(
            (
                f"; {len(spec.closures)} closure rule(s)" if spec.closures else "",
                f"; {len(spec.working_days)} extra working day(s)" if spec.working_days else "",
                "; holidays cancel shifts" if spec.holiday_mode == "cancel-shift" else "",
                _changes(calendar, now),
            )
        )
        # Computing something proves the holidays and windows resolve for this year.
        opens = calendar.next_open(now)
        print(
            f"ok  {calendar.name:<30} {spec.timezone:<18} holidays {holidays:<7} "
            f"{week}{extras}  (next open {opens.isoformat(timespec='minutes')})"
        )
    print(f"taskflow: {len(found)} calendar(s) valid, {failed} invalid, in {target}")
    return 1 if failed else 0


def due(args: argparse.Namespace) -> int:
    calendar = find(args.name, args.calendars)
    start = parse_instant("START", args.start)
    budget = parse_budget(args.budget)
    explanation = calendar.explain(start, budget)
    print(explanation.due.isoformat())
    if not args.quiet:
        for line in explanation.lines():
            print(f"  {line}")
    return 0


def elapsed(args: argparse.Namespace) -> int:
    calendar = find(args.name, args.calendars)
    start = parse_instant("START", args.start)
    end = parse_instant("END", args.end)
    if end < start:
        raise errors.ValidationError(
            f"END {args.end} is before START {args.start}: give the earlier instant first."
        )
    worked = calendar.elapsed(start, end)
    print(f"{calendars.explain.duration(worked)}  ({worked.total_seconds():g} s)")
    return 0


FOLDER_HELP = "Folder of calendar files (default: $TASKFLOW_CALENDARS or ./calendars)."


def add_commands(subparsers: Any) -> Any:
    """``taskflow calendar`` with check, due and elapsed; its subcommands (to add more to)."""
    parser = subparsers.add_parser(
        "calendar", help="Check business-hours calendars and compute due instants."
    )
    commands = parser.add_subparsers(dest="calendar_command", metavar="SUBCOMMAND")
    parser.set_defaults(handler=lambda _args: (parser.print_help(), 2)[1])

    check_parser = commands.add_parser("check", help="Validate calendar files (a file or folder).")
    check_parser.add_argument(
        "path",
        nargs="?",
        help="A .toml file or a folder (default: $TASKFLOW_CALENDARS or ./calendars).",
    )
    check_parser.set_defaults(handler=check)

    folder_help = FOLDER_HELP
    due_parser = commands.add_parser(
        "due", help="When a budget of working time from START is due, and why."
    )
    due_parser.add_argument("name", help="Calendar name, a .toml path, or real-time.")
    due_parser.add_argument(
        "start", help="ISO 8601 instant with offset, e.g. 2026-12-24T16:00+00:00."
    )
    due_parser.add_argument("budget", help="Working time: 8h, 90m, 1h30m, 45s or 08:30.")
    due_parser.add_argument("--calendars", help=folder_help)
    due_parser.add_argument(
        "-q", "--quiet", action="store_true", help="Print the due instant only."
    )
    due_parser.set_defaults(handler=due)

    elapsed_parser = commands.add_parser("elapsed", help="Working time between two instants.")
    elapsed_parser.add_argument("name", help="Calendar name, a .toml path, or real-time.")
    elapsed_parser.add_argument("start", help="ISO 8601 instant with offset.")
    elapsed_parser.add_argument("end", help="ISO 8601 instant with offset.")
    elapsed_parser.add_argument("--calendars", help=folder_help)
    elapsed_parser.set_defaults(handler=elapsed)
    return commands
