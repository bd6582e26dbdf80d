"""``taskflow calendar``: check, due, elapsed (``calendar_cmd``), and diff, import-ics, export-ics,
fetch-ics.

diff, import-ics and export-ics change calendars without rewriting the past; fetch-ics
refreshes an ICS file from an HTTPS feed (``service/clocks/ics_feeds.py``).

Like the other calendar commands these read and write calendar files only: no
database, no secret (fetch-ics reads the webhooks' address rules from the settings). The
clock is read here (the core takes ``now``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from taskflow import errors
from taskflow.cli import calendar_cmd
from taskflow.config import config
from taskflow.core.clocks import calendars
from taskflow.core.clocks.calendars import diff as calendar_diff
from taskflow.core.clocks.calendars import ics, versions
from taskflow.service.clocks import calendar_files, ics_feeds

#: How far back a new or edited version may take effect (``TASKFLOW_CALENDAR_PAST_WINDOW``).
DEFAULT_PAST_WINDOW = "24h"


def past_window(text: str | None) -> timedelta:
    """``--window``, else ``TASKFLOW_CALENDAR_PAST_WINDOW``, else 24 hours."""
    value = text or os.environ.get("TASKFLOW_CALENDAR_PAST_WINDOW") or DEFAULT_PAST_WINDOW
    return calendar_cmd.parse_budget(value)


def _calendar(name: str, folder: str | None) -> calendars.Calendar:
    found = calendar_cmd.find(name, folder)
    if not isinstance(found, calendars.Calendar):
        raise errors.ValidationError(
            f"{name!r} is real time, not a calendar file: name a calendar."
        )
    return found


def diff(args: argparse.Namespace) -> int:
    old = _calendar(args.a, args.calendars)
    new = _calendar(args.b, args.calendars)
    for line in calendar_diff.lines(old.versions, new.versions):
        print(line)
    found = versions.first_change(old.versions, new.versions)
    if found is None:
        print(f"no change: {args.b} computes as {args.a} at every instant")
        return 0
    when = "since always" if found[0] is None else f"from {found[0].isoformat()}"
    print(f"working time differs {when}")
    now = datetime.now(UTC)
    try:
        versions.check_edit(old.versions, new.versions, now, past_window(args.window))
    except calendars.CalendarFileError as exc:
        print(f"REFUSED as an edit of {args.a}: {exc.message}")
        return 1
    return 0


def import_ics(args: argparse.Namespace) -> int:
    folder = Path(args.calendars or calendar_cmd.default_folder())
    source = Path(args.file)
    registry = calendar_files.load_folder(folder)
    old = registry.get(args.calendar)
    path = Path(old.spec.source)
    now = datetime.now(UTC)
    when = calendar_cmd.parse_instant("--effective", args.effective) if args.effective else now
    when = when.replace(microsecond=0)  # as written in the file
    target = folder / source.name
    if (
        target.exists()
        and target.resolve() != source.resolve()
        and target.read_bytes() != source.read_bytes()
    ):
        raise errors.ValidationError(
            f"{target} exists with other content: rename {source.name} and import again."
        )
    text = path.read_text(encoding="utf-8")
    addition = (
        f"\n[[versions]]\neffective = {when.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
        f'description = "imported {source.name}"\n\n[[versions.ics]]\nfile = "{source.name}"\n'
    )
    # Validate everything in a scratch copy of the folder: nothing is written unless it loads.
    with tempfile.TemporaryDirectory() as scratch:
        trial = Path(scratch)
        for toml in folder.glob("*.toml"):
            shutil.copyfile(toml, trial / toml.name)
        for other in folder.glob("*.ics"):
            shutil.copyfile(other, trial / other.name)
        try:
            shutil.copyfile(source, trial / source.name)
        except OSError as exc:
            raise errors.ValidationError(f"cannot read {source}: {exc}") from None
        (trial / path.name).write_text(text + addition, encoding="utf-8")
        try:
            new = calendar_files.load_folder(trial).get(old.name)
        except calendars.CalendarFileError as exc:
            # Name the user's files, not the scratch copies.
            real = source if Path(exc.file).name == source.name else folder / Path(exc.file).name
            raise calendars.CalendarFileError(
                str(real), exc.key, exc.problem, line=exc.line
            ) from None
        versions.check_edit(old.versions, new.versions, now, past_window(args.window))
        count = len(new.versions[-1].spec.closures) - len(old.versions[-1].spec.closures)
        if target.resolve() != source.resolve():
            shutil.copyfile(trial / source.name, target)
        os.replace(_staged(path, text + addition), path)
    print(
        f"imported {source.name} into {old.name}: {count} closure(s) from "
        f"{when.isoformat()} ({path}, versions[{len(new.versions) - 2}])"
    )
    return 0


def _staged(path: Path, text: str) -> Path:
    """``text`` written beside ``path``, ready to replace it in one rename."""
    staged = path.with_name(f".{path.name}.new")
    staged.write_text(text, encoding="utf-8")
    return staged


def export_ics(args: argparse.Namespace) -> int:
    calendar = _calendar(args.name, args.calendars)
    start = calendar_cmd.parse_instant("--from", args.start) if args.start else datetime.now(UTC)
    data = ics.export(calendar, start, args.days)
    if args.output:
        Path(args.output).write_bytes(data)
    else:
        sys.stdout.write(data.decode())
    return 0


def fetch_ics(args: argparse.Namespace) -> int:
    """Fetch an HTTPS feed into the calendars folder (unless unchanged); a failure keeps the
    last good copy and exits 1."""
    folder = Path(args.calendars or os.environ.get("TASKFLOW_CALENDARS") or "calendars")
    net = ics_feeds.Net(config.load().webhooks)
    try:
        done = asyncio.run(
            ics_feeds.fetch(
                net,
                args.url,
                folder / args.into,
                ics_feeds.FeedSettings.from_env(),
                datetime.now(UTC),
            )
        )
    except errors.TaskflowError as exc:
        print(f"taskflow: {exc.message}", file=sys.stderr)
        return 1
    state = "fetched" if done.changed else "unchanged (304)"
    print(f"{args.into}: {state}, {done.closures} closure(s)")
    return 0


def register(subparsers: Any) -> None:
    """``taskflow calendar`` with every subcommand."""
    commands = calendar_cmd.add_commands(subparsers)
    folder_help = calendar_cmd.FOLDER_HELP
    window_help = (
        "How far back a change may take effect (default $TASKFLOW_CALENDAR_PAST_WINDOW or 24h)."
    )
    parser = commands.add_parser(
        "diff", help="What calendar B changes from A, version by version, and from when."
    )
    parser.add_argument("a", help="Calendar name or .toml path (the one in force).")
    parser.add_argument("b", help="Calendar name or .toml path (the edited one).")
    for option, text in (("--calendars", folder_help), ("--window", window_help)):
        parser.add_argument(option, help=text)
    parser.set_defaults(handler=diff)

    parser = commands.add_parser(
        "import-ics", help="Add an RFC 5545 holiday/closure file to a calendar, from now on."
    )
    parser.add_argument("file", help="The .ics file (copied into the calendars folder).")
    parser.add_argument("--calendar", required=True, help="The calendar it closes.")
    for option, text in (
        ("--effective", "ISO 8601 instant it takes effect (default: now)."),
        ("--calendars", folder_help),
        ("--window", window_help),
    ):
        parser.add_argument(option, help=text)
    parser.set_defaults(handler=import_ics)

    parser = commands.add_parser(
        "export-ics", help="A calendar's working windows and closures as ICS (default: a year)."
    )
    parser.add_argument("name", help="Calendar name or .toml path.")
    parser.add_argument("--from", dest="start", help="ISO 8601 instant (default: now).")
    parser.add_argument("--days", type=int, default=366, help="How many days (default 366).")
    parser.add_argument("-o", "--output", help="Write to this file (default: standard output).")
    parser.add_argument("--calendars", help=folder_help)
    parser.set_defaults(handler=export_ics)

    parser = commands.add_parser(
        "fetch-ics", help="Refresh an ICS file from an HTTPS feed (ETag; last good copy kept)."
    )
    parser.add_argument("url", help="The feed's https:// URL.")
    parser.add_argument("--into", required=True, help="The .ics file name in the folder.")
    parser.add_argument("--calendars", help=folder_help)
    parser.set_defaults(handler=fetch_ics)
