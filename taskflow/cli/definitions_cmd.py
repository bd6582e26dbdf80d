"""``taskflow check | graph | show``: workflow definitions from the shell.

No database and no signing secret are needed: these read Python definition
files and calendar files only.
"""

from __future__ import annotations

import argparse
import json
import sys

from taskflow.core.definition import DefinitionError, render
from taskflow.core.definition.workflow import Definition
from taskflow.service.versions import definitions


def _catalog(paths: list[str] | None) -> definitions.Catalog:
    sources = tuple(paths) if paths else definitions.sources_from_env()
    known = definitions.calendar_names(definitions.calendars_dir_from_env())
    return definitions.load(sources, known)


def _summary(d: Definition) -> str:
    slots = sum(len(s.slots) for s in d.states)
    terminal = sum(1 for s in d.states if s.terminal)
    return (
        f"ok  {d.key:<28} tracks {d.tracks}: {len(d.states)} states ({terminal} terminal), "
        f"{slots} slots, calendar {d.calendar or '-'}, {d.digest[:19]}  [{d.source}]"
    )


def check(args: argparse.Namespace) -> int:
    """Load and validate definitions; a line per workflow, or every problem (exit 1)."""
    try:
        catalog = _catalog(args.paths)
    except DefinitionError as exc:
        for problem in exc.problems:
            print(f"error  {problem}", file=sys.stderr)
        count = len(exc.problems)
        print(f"{count} problem{'s' if count != 1 else ''} found.", file=sys.stderr)
        return 1
    for definition in catalog:
        print(_summary(definition))
    if not len(catalog):
        print("no workflow definitions found", file=sys.stderr)
        return 1
    return 0


def _definition(args: argparse.Namespace) -> Definition:
    return _catalog(args.paths).get(args.workflow, args.version)


def graph(args: argparse.Namespace) -> int:
    """Print a workflow as a Mermaid state diagram."""
    sys.stdout.write(render.mermaid(_definition(args)))
    return 0


def show(args: argparse.Namespace) -> int:
    """Print a workflow's JSON document (with its digest)."""
    definition = _definition(args)
    document = {**definition.to_document(), "digest": definition.digest}
    print(json.dumps(document, indent=2, ensure_ascii=False))
    return 0


def _select(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workflow", help="the workflow's name, e.g. expense-approval")
    parser.add_argument("--version", type=int, default=None, help="a version (default: latest)")
    parser.add_argument(
        "--path",
        dest="paths",
        action="append",
        metavar="PATH",
        help="a module, file or folder of definitions (default: TASKFLOW_WORKFLOWS); repeatable",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``check``, ``graph`` and ``show`` to the ``taskflow`` command."""
    parser = subparsers.add_parser(
        "check",
        help="Load and validate workflow definitions.",
        description="Load workflow definitions and report every problem, naming the fix.",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="modules, files or folders (default: TASKFLOW_WORKFLOWS, else examples/)",
    )
    parser.set_defaults(handler=check)

    parser = subparsers.add_parser("graph", help="Print a workflow as a Mermaid state diagram.")
    _select(parser)
    parser.set_defaults(handler=graph)

    parser = subparsers.add_parser("show", help="Print a workflow's JSON document.")
    _select(parser)
    parser.set_defaults(handler=show)
