"""The ``taskflow`` command: the composition root.

Each group of subcommands lives in its own module exposing
``register(subparsers) -> None``; every handler takes the parsed
``argparse.Namespace`` and returns a process exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from taskflow import errors

# Imported for their ``register``; order is the order of ``taskflow --help``.
COMMAND_MODULES = (
    "taskflow.cli.server_cmd",
    "taskflow.cli.principals_cmd",
    "taskflow.cli.calendar_cmd",
    "taskflow.cli.definitions_cmd",
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
        return int(handler(args))
    except errors.TaskflowError as exc:
        print(f"taskflow: error [{exc.code}]: {exc.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
