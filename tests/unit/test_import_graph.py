"""The layer rules of docs/architecture.md, checked on the real import statements."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "taskflow"

#: layer -> the taskflow modules it may import (prefixes).
ALLOWED = {
    "core": ("taskflow.core", "taskflow.errors"),
    "store": ("taskflow.core", "taskflow.store", "taskflow.errors", "taskflow.config"),
    "service": (
        "taskflow.core",
        "taskflow.store",
        "taskflow.service",
        "taskflow.errors",
        "taskflow.config",
        "taskflow.clock",
    ),
    "worker": (
        "taskflow.core",
        "taskflow.service",
        "taskflow.worker",
        "taskflow.errors",
        "taskflow.config",
        "taskflow.clock",
    ),
    "api": (
        "taskflow.core",
        "taskflow.service",
        "taskflow.api",
        "taskflow.errors",
        "taskflow.config",
        "taskflow.clock",
    ),
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # "from taskflow.core import calendars" imports taskflow.core.calendars.
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in found if name.startswith("taskflow.")]


def violations(layer: str) -> list[str]:
    allowed = ALLOWED[layer]
    bad = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for line, name in imported_modules(path):
            if not name.startswith(allowed):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}")
    return bad


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_what_it_may(layer: str) -> None:
    assert violations(layer) == []


def test_the_checker_catches_a_core_module_importing_the_store(tmp_path: Path) -> None:
    offending = tmp_path / "bad.py"
    offending.write_text("from taskflow.store import db\nimport taskflow.api.app\n")
    names = [name for _, name in imported_modules(offending)]
    assert names == ["taskflow.store.db", "taskflow.api.app"]
    assert not any(name.startswith(ALLOWED["core"]) for name in names)


def test_core_reads_no_clock_and_does_no_io() -> None:
    forbidden = ("datetime.now(", "datetime.utcnow(", "time.time(", "import asyncio", "asyncpg")
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}: {needle}"
        for path in (PACKAGE / "core").rglob("*.py")
        for needle in forbidden
        if needle in path.read_text()
    ]
    assert offenders == []
