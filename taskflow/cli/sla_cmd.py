"""``taskflow sla dry-run FILE``: play an SLA timeline through a definition, offline.

No database and no signing secret are needed: the definitions and calendars are read
from their files (``TASKFLOW_WORKFLOWS``, ``TASKFLOW_CALENDARS``, or ``--path``), and the
play happens in memory (docs/sla.md, "SLA dry run").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from taskflow import errors
from taskflow.service.clocks import calendar_files, dry_run
from taskflow.service.versions import definitions


def dry_run_file(args: argparse.Namespace) -> int:
    """Play FILE ({workflow, version?, subject, events}) and print the answer as JSON."""
    text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise errors.ValidationError(
            f"{args.file} is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    sources = tuple(args.paths) if args.paths else definitions.sources_from_env()
    folder = definitions.calendars_dir_from_env()
    catalog = definitions.load(sources, definitions.calendar_names(folder))
    registry = calendar_files.load_folder(folder)
    answer = dry_run.play_file(catalog, registry, document)
    print(json.dumps(dry_run.to_json(answer), indent=2, ensure_ascii=False))
    return 0


def register(subparsers: Any) -> None:
    """``taskflow sla dry-run FILE``."""
    sla = subparsers.add_parser("sla", help="SLA tools (dry-run a timeline).")
    sub = sla.add_subparsers(dest="sla_command", metavar="SUBCOMMAND", required=True)
    run = sub.add_parser(
        "dry-run",
        help="Play a JSON timeline through a workflow on a scratch clock: deadlines, "
        "reminders, escalations, breaches and the business-time walk behind each.",
    )
    run.add_argument("file", metavar="FILE", help="the timeline, a JSON file ('-': stdin)")
    run.add_argument(
        "--path",
        dest="paths",
        action="append",
        metavar="PATH",
        help="a module, file or folder of definitions (default: TASKFLOW_WORKFLOWS); repeatable",
    )
    run.set_defaults(handler=dry_run_file)
