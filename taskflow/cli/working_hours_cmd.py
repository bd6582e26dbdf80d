"""``taskflow principals hours`` and ``taskflow principals leave``: a principal's working hours
and leave from the command line (as ``setWorkingHours`` / ``addLeave`` / ``removeLeave`` do,
read as an admin: HR entering an absence, a deployment script setting a team's hours); and
``taskflow principals team-calendar``: a team's own calendar (as ``setTeamCalendar``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.cli import runtime
from taskflow.config import config
from taskflow.core.access import principals as core
from taskflow.service.access import working_hours
from taskflow.service.clocks import team_calendars
from taskflow.service.common.container import Services

#: The command line acts as an admin: it runs with the server's own settings and database.
OPERATOR = core.Principal(
    id="taskflow-cli", display_name="taskflow principals", roles=(core.ADMIN_ROLE,)
)


def _run(change: Callable[[Services], Awaitable[core.Principal]], principal_id: str) -> int:
    try:
        stored = runtime.on_services(config.load(), change)
    except errors.TaskflowError as exc:
        return runtime.fail(exc.message)
    hours = stored.working_hours.as_dict() if stored.working_hours else None
    leave = [entry.as_dict() for entry in stored.leave]
    print(f"taskflow: {principal_id!r} hours {json.dumps(hours)}, leave {json.dumps(leave)}")
    return 0


def hours(args: argparse.Namespace) -> int:
    """Set (or ``--clear``) weekly windows (``--windows JSON``) or a named ``--calendar``."""
    try:
        windows = json.loads(args.windows) if args.windows is not None else None
    except json.JSONDecodeError as exc:
        return runtime.fail(
            f'--windows is not JSON ({exc.msg}); e.g. \'{{"mon": [["09:00", "17:00"]]}}\'.'
        )
    return _run(
        lambda svc: working_hours.set_working_hours(
            svc,
            OPERATOR,
            args.principal_id,
            time_zone=args.time_zone,
            windows=windows,
            calendar=args.calendar,
            clear=args.clear,
        ),
        args.principal_id,
    )


def _instant(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an instant; write e.g. 2026-12-24T00:00:00+00:00"
        ) from None


def leave(args: argparse.Namespace) -> int:
    """Add the absence ``[FROM, TO)``, or ``--remove`` it."""
    if args.remove:
        return _run(
            lambda svc: working_hours.remove_leave(
                svc, OPERATOR, args.principal_id, args.start, args.end
            ),
            args.principal_id,
        )
    return _run(
        lambda svc: working_hours.add_leave(
            svc, OPERATOR, args.principal_id, args.start, args.end, args.note
        ),
        args.principal_id,
    )


def team_calendar(args: argparse.Namespace) -> int:
    """Give a team its own calendar (or ``--clear`` it); its running clocks move at once."""
    if (args.calendar is None) != args.clear:
        return runtime.fail("give a CALENDAR, or --clear to remove the team's own calendar.")

    def change(svc: Services) -> Awaitable[team_calendars.TeamCalendarSet]:
        return team_calendars.set_team_calendar(svc, OPERATOR, args.team, args.calendar)

    try:
        done = runtime.on_services(config.load(), change)
    except errors.TaskflowError as exc:
        return runtime.fail(exc.message)
    print(
        f"taskflow: team {done.team!r} calendar {done.calendar or '(none of its own)'}; "
        f"clocks of {done.moved} live slot(s) moved"
    )
    return 0


def register(sub: Any) -> None:
    """The ``hours`` and ``leave`` actions of ``taskflow principals``."""
    parser = sub.add_parser("hours", help="Set a principal's working hours (or --clear them).")
    parser.add_argument("principal_id", help="The principal's id.")
    parser.add_argument("--time-zone", default="UTC", help="An IANA zone (default UTC).")
    parser.add_argument("--windows", help='Weekly windows as JSON: {"mon": [["09:00", "17:00"]]}.')
    parser.add_argument("--calendar", help="A loaded calendar's name instead of windows.")
    parser.add_argument("--clear", action="store_true", help="Unset their working hours.")
    parser.set_defaults(handler=hours)
    parser = sub.add_parser("leave", help="Add a principal's leave [FROM, TO) (or --remove it).")
    parser.add_argument("principal_id", help="The principal's id.")
    parser.add_argument("start", metavar="FROM", type=_instant, help="An instant with an offset.")
    parser.add_argument("end", metavar="TO", type=_instant, help="An instant with an offset.")
    parser.add_argument("--note", help="Why (at most 200 characters).")
    parser.add_argument("--remove", action="store_true", help="Remove this absence instead.")
    parser.set_defaults(handler=leave)
    parser = sub.add_parser(
        "team-calendar", help="Give a team (role:x, group:x) its own calendar (or --clear it)."
    )
    parser.add_argument("team", help="The team: role:<name> or group:<name>.")
    parser.add_argument("calendar", nargs="?", help="A loaded calendar's name.")
    parser.add_argument("--clear", action="store_true", help="Remove its own calendar.")
    parser.set_defaults(handler=team_calendar)
