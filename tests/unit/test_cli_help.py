"""Every ``taskflow`` subcommand's ``--help`` opens with a description and shows defaults.

Before, ``taskflow serve --help`` and most others printed only usage and options
(no line saying what the command does), and ``worker --help`` hid that ``--batch``
is 100 and ``--poll`` one second.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from taskflow.cli import build_parser


def _subcommands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _subcommands(sub, (*path, name))


COMMANDS = list(_subcommands(build_parser()))


def test_the_walk_finds_the_known_commands() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"serve", "worker", "show", "principals load", "calendar due"} <= names


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_has_a_description_line_and_shows_every_default(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    text = parser.format_help()
    lines = text.splitlines()
    # usage (one or more lines), a blank line, then the description.
    blank = lines.index("")
    assert parser.description, f"taskflow {' '.join(path)}: no description"
    assert lines[blank + 1].strip(), f"taskflow {' '.join(path)}: no description line"
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        assert action.help, f"taskflow {' '.join(path)} {action.dest}: no help"
        if action.option_strings and action.default not in (None, False, argparse.SUPPRESS):
            # argparse wraps long defaults, also inside a path at a hyphen: compare the
            # text without any white space.
            shown = "".join(f"default: {action.default}".split())
            assert shown in "".join(text.split()) or "default" in action.help.lower(), (
                f"taskflow {' '.join(path)} {action.option_strings[0]}: default not shown"
            )
