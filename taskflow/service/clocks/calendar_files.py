"""Reading business calendar files: the shell's half of calendar loading.

The core validates and resolves calendar tables (``core.calendars.registry.Tables``);
this module reads ``.toml`` files and folders of them from disk.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from taskflow.core.clocks import calendars
from taskflow.core.clocks.calendars import errors
from taskflow.core.clocks.calendars.registry import Tables


def read(path: Path) -> dict[str, Any]:
    """The TOML table of one calendar file."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise errors.CalendarFileError(
            str(path), None, "no such file: give the path of a .toml calendar file"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise errors.CalendarFileError(str(path), None, f"not valid TOML: {exc}") from None
    except OSError as exc:
        raise errors.CalendarFileError(str(path), None, f"cannot be read: {exc}") from None


def _folder_tables(folder: Path) -> dict[str, dict[str, Any]]:
    if not folder.is_dir():
        raise errors.CalendarFileError(
            str(folder), None, "is not a folder: give a folder of .toml calendar files"
        )
    return {str(path): read(path) for path in sorted(folder.glob("*.toml"))}


def load(path: str | Path) -> calendars.Calendar:
    """The calendar in one file; a parent it ``inherits`` is read from the same folder."""
    path = Path(path)
    data = read(path)
    tables: dict[str, dict[str, Any]] = {}
    inherits = data.get("inherits")
    if isinstance(inherits, str) and inherits.strip() and path.parent.is_dir():
        tables = {source: table for source, table in _folder_tables(path.parent).items()}
        tables.pop(str(path), None)
    resolver = Tables(str(path.parent), {})
    name = resolver.add(str(path), data)
    for source, table in tables.items():
        # Siblings only matter as parents; a sibling that shares this file's name is the
        # error the folder check reports, not this file's.
        sibling = table.get("name", Path(source).stem)
        if sibling != name:
            resolver.add(source, table)
    return resolver.calendar(name)


def load_folder(path: str | Path) -> calendars.Registry:
    """Every ``*.toml`` calendar in a folder, validated, by name."""
    folder = Path(path)
    return Tables(str(folder), _folder_tables(folder)).registry()
