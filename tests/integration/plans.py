"""Reading PostgreSQL's JSON plans (``EXPLAIN (FORMAT JSON)``) in the index tests."""

from __future__ import annotations

from typing import Any


def nodes(plan: Any) -> list[dict[str, Any]]:
    """Every node of a JSON plan, its root first (depth first)."""
    found: list[dict[str, Any]] = []
    stack = [plan[0]["Plan"]]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.get("Plans", []))
    return found


def scans(plan: Any) -> list[tuple[str, str]]:
    """(node type, relation) of every node of a JSON plan."""
    return [(n["Node Type"], n.get("Relation Name", "")) for n in nodes(plan)]
