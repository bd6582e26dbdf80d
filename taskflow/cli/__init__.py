"""The ``taskflow`` command: the composition root.

Each group of subcommands lives in its own module exposing
``register(subparsers) -> None``; every handler takes the parsed
``argparse.Namespace`` and returns a process exit code.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from taskflow import errors

# Imported for their ``register``; order is the order of ``taskflow --help``.
COMMAND_MODULES = (
    "taskflow.cli.server_cmd",
    "taskflow.cli.principals_cmd",
    "taskflow.cli.workspaces_cmd",
    "taskflow.cli.calendar_edit_cmd",  # with calendar_cmd's check, due, elapsed
    "taskflow.cli.sla_cmd",
    "taskflow.cli.definitions_cmd",
    "taskflow.cli.versions_cmd",
    "taskflow.cli.demo_cmd",
    "taskflow.cli.reports_cmd",
    "taskflow.cli.retention_cmd",
    "taskflow.cli.insights_cmd",
    "taskflow.cli.worker_cmd",
    "taskflow.cli.webhooks_cmd",
    "taskflow.cli.mcp_cmd",
    "taskflow.cli.forecast_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    import importlib

    parser = argparse.ArgumentParser(
        prog="taskflow",
        description="taskflow: human work with deadlines.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        # A listed module that is missing is a packaging bug: fail loudly, never drop it.
        importlib.import_module(name).register(subparsers)
    _complete_help(parser)
    return parser


class DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows ``(default: x)`` after an option's help, unless it has none worth saying
    (None, a false flag) or the help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default in (None, False, argparse.SUPPRESS) or "default" in text.lower():
            return action.help
        return super()._get_help_string(action)


def _complete_help(parser: argparse.ArgumentParser) -> None:
    """Every subcommand's ``--help`` opens with a description line and shows defaults.

    A subcommand without its own ``description`` gets the help line its parent lists
    it with, else its handler's docstring's first line.
    """
    parser.formatter_class = DefaultsHelpFormatter
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        listed = {a.dest: a.help for a in action._choices_actions}
        for name, sub in action.choices.items():
            if not sub.description:
                handler = sub.get_default("handler")
                doc = (getattr(handler, "__doc__", None) or "").strip().splitlines()
                sub.description = listed.get(name) or (doc[0] if doc else None)
            _complete_help(sub)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        code = int(handler(args))
        sys.stdout.flush()  # a closed pipe shows here, not in an exit hook's traceback
        return code
    except errors.TaskflowError as exc:
        print(f"taskflow: error [{exc.code}]: {exc.message}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # `taskflow show x | head -1`: the reader left. Later writes (and the flush at
        # exit) go nowhere instead of raising again.
        _silence_stdout()
        print(
            "taskflow: error: the output was closed before it was all written "
            "(e.g. piped into head); the rest was dropped.",
            file=sys.stderr,
        )
        return 1
    except OverflowError:
        print(
            "taskflow: error: a number, date or duration given is out of range (datetime holds "
            "years 1 to 9999): give a smaller one.",
            file=sys.stderr,
        )
        return 1
    except UnicodeDecodeError as exc:
        print(
            f"taskflow: error: a file is not UTF-8 text ({exc.reason} at byte {exc.start}): "
            "save it as UTF-8.",
            file=sys.stderr,
        )
        return 1
    except OSError as exc:
        name = exc.filename if exc.filename is not None else "a file"
        print(
            f"taskflow: error: cannot read or write {name}: {exc.strerror or exc}. "
            "Check the path and its permissions.",
            file=sys.stderr,
        )
        return 1


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
