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


def seed_runs_sql(runs: int, run_values: str) -> str:
    """SQL seeding ``runs`` parcel subjects ``P-1``... (ids ``md5('s' || n)``) and a run of
    each (ids ``md5('r' || n)``), whose column values ``run_values`` selects over ``n``."""
    return f"""
        INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
        SELECT md5('s' || n)::uuid, 'parcel', 'P-' || n, '{{}}'::jsonb, 1, now(), now()
        FROM generate_series(1, {runs}) n;
        INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state,
                         status, visit, correlation_key, idempotency_key, started_by,
                         started_at, state_entered_at, updated_at, ended_at, version)
        SELECT {run_values}
        FROM generate_series(1, {runs}) n;
        """
