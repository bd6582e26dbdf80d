"""Statements by name: every ``.sql`` file under the store parses, and the parser refuses
what would make a statement ambiguous."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from taskflow.store.common import sql

STORE = Path(sql.__file__).parents[1]


def test_named_statements_are_split_at_their_names() -> None:
    text = (
        "-- a file comment\n-- name: one\n-- what one does\nSELECT 1\n\n-- name: two\nSELECT $1\n"
    )
    assert sql.parse(text) == {"one": "-- what one does\nSELECT 1", "two": "SELECT $1"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("-- name: one\nSELECT 1\n-- name: one\nSELECT 2\n", "named twice"),
        ("SELECT 1\n-- name: one\nSELECT 2\n", "before the first"),
        ("-- name: one\n\n-- name: two\nSELECT 2\n", "is empty"),
    ],
)
def test_a_malformed_file_is_refused(text: str, says: str) -> None:
    with pytest.raises(sql.StatementFileError, match=says):
        sql.parse(text)


def test_fragments_are_filled_into_the_statements_that_name_them() -> None:
    text = (
        "-- fragment: open\n-- its doc, not copied\nstatus = 'open'\n"
        "-- fragment: open_and_mine\n/*fragment:open*/ AND holder = $1\n"
        "-- name: one\nSELECT 1 FROM slot WHERE /*fragment:open*/\n"
        "-- name: two\nSELECT 2 FROM slot WHERE /*fragment:open_and_mine*/\n"
    )
    assert sql.parse(text) == {
        "one": "SELECT 1 FROM slot WHERE status = 'open'",
        "two": "SELECT 2 FROM slot WHERE status = 'open' AND holder = $1",
    }


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("-- name: one\nSELECT /*fragment:nope*/\n", "unknown or circular fragment 'nope'"),
        ("-- fragment: a\n/*fragment:a*/\n-- name: one\nSELECT /*fragment:a*/\n", "circular"),
        ("-- fragment: a\n1\n-- name: one\nSELECT 1\n", "fragments ['a'] unused"),
        ("-- fragment: one\n1\n-- name: one\nSELECT /*fragment:one*/\n", "named twice"),
    ],
)
def test_a_bad_fragment_is_refused(text: str, says: str) -> None:
    with pytest.raises(sql.StatementFileError, match=re.escape(says)):
        sql.parse(text)


def test_every_statement_file_in_the_package_loads() -> None:
    for path in sorted(STORE.rglob("*.sql")):
        assert sql.statements(_name(path)), f"{path.name} holds no statement"


def _name(path: Path) -> str:
    """The name a store module loads ``path`` by: ``room/stem``."""
    return path.relative_to(STORE).with_suffix("").as_posix()


def _named_uses() -> dict[str, tuple[str, set[str]]]:
    """Per store module: the file it loads (``sql.statements("file")``) and the names it
    reads from it (``SQL["name"]``)."""
    uses: dict[str, tuple[str, set[str]]] = {}
    for path in sorted(STORE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        files = [
            node.args[0].value
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "statements"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "sql"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ]
        names = {
            node.slice.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "SQL"
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        }
        if files or names:
            assert len(files) == 1, f"{path.name}: one statement file per module, read as SQL"
            uses[_name(path)] = (files[0], names)
    return uses


def test_every_store_module_loads_its_statements_at_import() -> None:
    for module in _named_uses():
        importlib.import_module("taskflow.store." + module.replace("/", "."))


def test_every_statement_a_module_names_exists_and_every_statement_is_used() -> None:
    uses = _named_uses()
    assert "slots/queries" in uses, "the scan found no module reading named statements"
    read: dict[str, set[str]] = {}
    for module, (file, names) in uses.items():
        missing = names - set(sql.statements(file))
        assert not missing, f"store/{module}.py names {sorted(missing)}, not in {file}.sql"
        read.setdefault(file, set()).update(names)
    for path in sorted(STORE.rglob("*.sql")):
        if path.stem == "fragments":
            continue
        unused = set(sql.statements(_name(path))) - read.get(_name(path), set())
        assert not unused, f"{path.name}: statements {sorted(unused)} are read by no module"
