"""Statements by name: every ``.sql`` file under the store parses, and the parser refuses
what would make a statement ambiguous."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskflow.store import sql

SQL_DIR = Path(sql.__file__).parent


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


def test_every_statement_file_in_the_package_loads() -> None:
    for path in sorted(SQL_DIR.glob("*.sql")):
        assert sql.statements(path.stem), f"{path.name} holds no statement"
