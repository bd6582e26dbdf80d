"""SQL statements live in the store: no module outside ``taskflow/store`` holds SQL text.

Looks at every string literal (f-string parts included) of every module outside the
store for the shape of a statement; the check proves itself on planted text.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "taskflow"

STATEMENT = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bFOR\s+(NO\s+KEY\s+)?UPDATE\b|\bLISTEN\s+\w|\bNOTIFY\s+\w",
)


def sql_in(source: str) -> list[int]:
    """Lines of string literals (docstrings aside: they may name statements) that read as
    SQL statements."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and STATEMENT.search(node.value)
    )


def test_no_sql_outside_the_store() -> None:
    checked = 0
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if (PACKAGE / "store") in path.parents:
            continue
        checked += 1
        offenders += [f"{path.relative_to(PACKAGE.parent)}:{n}" for n in sql_in(path.read_text())]
    assert checked > 100
    assert offenders == []


def test_the_check_finds_planted_sql() -> None:
    planted = (
        'x = "SELECT id FROM slot WHERE holder = $1"\n'
        'y = f"UPDATE run SET state = {1}"\n'
        'z = "INSERT INTO audit_event (run) VALUES ($1)"\n'
        'w = "select 1"  # not a statement of a table\n'
    )
    assert sql_in(planted) == [1, 2, 3]
