"""Statements by name: the SQL that matters lives in ``.sql`` files beside the store
modules of its domain (``store/<room>/<name>.sql``, loaded as ``"room/name"``).

A file holds named statements, each introduced by a comment line ``-- name: NAME``;
the lines up to the next such line (trailing blank lines and ``--`` comments directly
under the name aside, which document the statement) are its text. Parameters are
positional (``$1``, ``$2``, ...) and each statement's comment says what they are.

:func:`statements` reads a file once, at first use (modules call it at import), and
refuses a file that names one statement twice or holds text before its first name, so a
typo fails the import instead of a request.

A piece of SQL several statements of a file share (a CTE, a SET list) is written once, in a
block introduced by ``-- fragment: NAME``, and stands in each statement as the marker
``/*fragment:NAME*/`` (a fragment may hold another's marker; the comment lines that
open a fragment document it and are not copied). Fragments are filled in when
the file is read; they are not statements, and an unknown or unused one is refused.
"""

from __future__ import annotations

import functools
import itertools
import re
import uuid
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType
from typing import Any

_NAME = re.compile(r"^--\s*(name|fragment):\s*([a-z_][a-z0-9_]*)\s*$")
_FRAGMENT = re.compile(r"/\*fragment:([a-z_][a-z0-9_]*)\*/")


class StatementFileError(ValueError):
    """A ``.sql`` file under ``taskflow/store`` is malformed (a packaging bug)."""


def parse(text: str, source: str = "<text>") -> dict[str, str]:
    """The named statements of ``text`` (see the module doc); ``source`` names it in errors."""
    found: dict[str, list[str]] = {}
    pieces: dict[str, list[str]] = {}
    current: list[str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _NAME.match(line.strip())
        if match:
            kind, name = match.groups()
            if name in found or name in pieces:
                raise StatementFileError(f"{source}:{number}: {kind} {name!r} named twice.")
            current = (found if kind == "name" else pieces)[name] = []
            continue
        if current is None:
            if line.strip() and not line.strip().startswith("--"):
                raise StatementFileError(
                    f"{source}:{number}: SQL before the first '-- name: ...' line."
                )
            continue
        current.append(line)
    # A fragment's leading comment documents it where it is written, not where it stands.
    fragments = {
        name: "\n".join(
            itertools.dropwhile(lambda line: line.lstrip().startswith("--"), lines)
        ).strip()
        for name, lines in pieces.items()
    }
    used: set[str] = set()

    def fill(body: str, depth: int = 0) -> str:
        def piece(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in fragments or depth > len(fragments):
                raise StatementFileError(f"{source}: unknown or circular fragment {name!r}.")
            used.add(name)
            return fill(fragments[name], depth + 1)

        return _FRAGMENT.sub(piece, body)

    statements: dict[str, str] = {}
    for name, lines in found.items():
        body = "\n".join(lines).strip()
        if not body:
            raise StatementFileError(f"{source}: statement {name!r} is empty.")
        statements[name] = fill(body)
    if set(fragments) - used:
        raise StatementFileError(f"{source}: fragments {sorted(set(fragments) - used)} unused.")
    return statements


@functools.cache
def statements(file: str) -> Mapping[str, str]:
    """The statements of ``taskflow/store/<room>/<name>.sql`` by name (``file`` is
    ``"room/name"``, the file beside the store modules of its domain; read once)."""
    text = resources.files("taskflow.store").joinpath(f"{file}.sql").read_text(encoding="utf-8")
    return MappingProxyType(parse(text, f"taskflow/store/{file}.sql"))


async def row_by_id(conn: Any, statement: str, text_id: str) -> Any:
    """The row ``statement`` (``$1``: a UUID) finds for ``text_id`` on ``conn``; None when
    the id is no UUID (a guessed or forged id) or names no row."""
    try:
        key = uuid.UUID(text_id)
    except ValueError:
        return None
    return await conn.fetchrow(statement, key)
