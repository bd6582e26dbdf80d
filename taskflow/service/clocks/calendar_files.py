"""Reading business calendar files: the shell's half of calendar loading.

The core validates and resolves calendar tables (``core.calendars.registry.Tables``);
this module reads ``.toml`` files and folders of them from disk.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from taskflow.core.clocks import calendars
from taskflow.core.clocks.calendars import errors
from taskflow.core.clocks.calendars.registry import Tables

_T = TypeVar("_T")
_PART = re.compile(r"^([^\[]+)(?:\[(\d+)\])?$")


def locate(text: str, key: str | None) -> int | None:
    """The line of ``key`` (``versions[1].week.mon-fri``) in a TOML file's text, if found."""
    if not key:
        return None
    lines = text.splitlines()
    at, found, path = 0, None, ""
    for part in key.split("."):
        match = _PART.match(part)
        if match is None:
            return found
        name, index = match[1], match[2]
        path = f"{path}.{name}" if path else name
        if index is not None:
            header = re.compile(rf"^\s*\[\[\s*{re.escape(path)}\s*\]\]")
            hits = [i for i in range(at, len(lines)) if header.match(lines[i])]
            if int(index) >= len(hits):
                return found
            at = hits[int(index)]
        else:
            own = re.compile(rf"^\s*(\[\s*{re.escape(path)}\s*\]|\"?{re.escape(name)}\"?\s*=)")
            hit = next((i for i in range(at, len(lines)) if own.match(lines[i])), None)
            if hit is None:
                return found
            at = hit
        found = at + 1
    return found


def _with_line(path: Path, work: Callable[[], _T]) -> _T:
    """Run ``work``; a file error about ``path`` without a line gets the key's line."""
    try:
        return work()
    except errors.CalendarFileError as exc:
        if exc.line is not None or exc.file != str(path):
            raise
        try:
            line = locate(path.read_text(encoding="utf-8"), exc.key)
        except OSError:
            line = None
        if line is None:
            raise
        raise errors.CalendarFileError(exc.file, exc.key, exc.problem, line=line) from None


def _read_ics(path: Path, table: dict[str, Any], key: str) -> None:
    """Read the ICS files an ``[[ics]]`` list names (beside the calendar file) into it."""
    entries = table.get("ics")
    if not isinstance(entries, list):
        return
    for index, item in enumerate(entries):
        if not isinstance(item, dict) or not isinstance(item.get("file"), str):
            continue  # the core refuses the shape, naming the key
        ics_path = path.parent / item["file"]
        try:
            content = ics_path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            where = f"{key}ics[{index}].file"
            raise errors.CalendarFileError(
                str(path),
                where,
                f"cannot read {ics_path}: {exc}. Put the .ics file beside the calendar file.",
                line=locate(path.read_text(encoding="utf-8"), where),
            ) from None
        item["file"] = str(ics_path)
        item["content"] = content


def read(path: Path) -> dict[str, Any]:
    """The TOML table of one calendar file (with the ICS files it names read in)."""
    table = _read_toml(path)
    _read_ics(path, table, "")
    versions = table.get("versions")
    for index, version in enumerate(versions if isinstance(versions, list) else []):
        if isinstance(version, dict):
            _read_ics(path, version, f"versions[{index}].")
    return table


def _read_toml(path: Path) -> dict[str, Any]:
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
    return _with_line(path, lambda: _resolve(path, data, tables))


def _resolve(
    path: Path, data: dict[str, Any], tables: dict[str, dict[str, Any]]
) -> calendars.Calendar:
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
    tables = Tables(str(folder), _folder_tables(folder))
    for name in sorted(tables.tables):
        source = tables.tables[name][0]
        _with_line(Path(source), functools.partial(tables.spec, name))
    return tables.registry()


def readers_of(folder: str | Path, file_name: str) -> list[str]:
    """The calendars of ``folder`` whose ``[[ics]]`` (or a version's) names ``file_name``, by
    name (what a failing feed's needs-attention item names); unreadable files are passed over."""
    found: set[str] = set()
    for path in sorted(Path(folder).glob("*.toml")):
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        parts = [table, *[v for v in table.get("versions", []) if isinstance(v, dict)]]
        files = {
            str(item.get("file"))
            for part in parts
            for item in part.get("ics", [])
            if isinstance(item, dict)
        }
        if file_name in files:
            found.add(str(table.get("name", path.stem)))
    return sorted(found)
