"""Statements by name: the SQL that matters lives in ``.sql`` files beside this module.

A file holds named statements, each introduced by a comment line ``-- name: NAME``;
the lines up to the next such line (trailing blank lines and ``--`` comments directly
under the name aside, which document the statement) are its text. Parameters are
positional (``$1``, ``$2``, ...) and each statement's comment says what they are.

:func:`statements` reads a file once, at first use (modules call it at import), and
refuses a file that names one statement twice or holds text before its first name, so a
typo fails the import instead of a request.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType

_NAME = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$")


class StatementFileError(ValueError):
    """A ``.sql`` file under ``taskflow/store/sql`` is malformed (a packaging bug)."""


def parse(text: str, source: str = "<text>") -> dict[str, str]:
    """The named statements of ``text`` (see the module doc); ``source`` names it in errors."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _NAME.match(line.strip())
        if match:
            name = match.group(1)
            if name in found:
                raise StatementFileError(f"{source}:{number}: statement {name!r} named twice.")
            current = found[name] = []
            continue
        if current is None:
            if line.strip() and not line.strip().startswith("--"):
                raise StatementFileError(
                    f"{source}:{number}: SQL before the first '-- name: ...' line."
                )
            continue
        current.append(line)
    statements: dict[str, str] = {}
    for name, lines in found.items():
        body = "\n".join(lines).strip()
        if not body:
            raise StatementFileError(f"{source}: statement {name!r} is empty.")
        statements[name] = body
    return statements


@functools.cache
def statements(file: str) -> Mapping[str, str]:
    """The statements of ``taskflow/store/sql/<file>.sql`` by name (read once)."""
    text = resources.files(__name__).joinpath(f"{file}.sql").read_text(encoding="utf-8")
    return MappingProxyType(parse(text, f"taskflow/store/sql/{file}.sql"))
