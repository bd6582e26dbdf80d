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
    "taskflow.cli.calendar_cmd",
    "taskflow.cli.definitions_cmd",
    "taskflow.cli.versions_cmd",
    "taskflow.cli.demo_cmd",
    "taskflow.cli.reports_cmd",
    "taskflow.cli.worker_cmd",
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
    return parser


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
