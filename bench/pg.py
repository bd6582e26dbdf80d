"""The PostgreSQL chores the benchmarks share: statements on the admin connection, and a
fresh database copied from a migrated template for each round."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg

from taskflow.store.common.db import with_database


async def admin(url: str, *statements: str, args: tuple[Any, ...] = ()) -> None:
    """Run ``statements`` one after the other on a connection of their own."""
    conn = await asyncpg.connect(url)
    try:
        for statement in statements:
            await conn.execute(statement, *args)
    finally:
        await conn.close()


async def fresh_database(admin_url: str, name: str, template: str) -> str:
    """Database ``name`` made anew as a copy of ``template``; its URL."""
    await admin(
        admin_url,
        f"DROP DATABASE IF EXISTS {name} WITH (FORCE)",
        f"CREATE DATABASE {name} TEMPLATE {template}",
    )
    return with_database(admin_url, name)


def serve_postgres(
    admin_url: str | None, data_dir: str, go: Callable[[str], Awaitable[None]]
) -> None:
    """Run ``go`` with the admin URL of ``admin_url`` (an external server) or of an
    embedded PostgreSQL in ``data_dir``, stopped afterwards."""
    if admin_url:
        asyncio.run(go(admin_url))
        return
    from taskflow.store.common import embedded

    server = embedded.EmbeddedPostgres(Path(data_dir))
    try:
        asyncio.run(go(server.url()))
    finally:
        server.stop()


def line_details(kind: str, state: str) -> str:
    """The details of a raw loop's timeline line: a state entered names its state, as
    taskflow's lines do (the timeline's trigger keeps each run's state spans from them)."""
    return json.dumps({"state": state}) if kind == "state.entered" else "{}"


def item_runs(workflow: str, state: str) -> str:
    """The CTEs ``subjects`` and ``runs`` a seeding statement starts with: ``$1`` subjects of
    type ``item``, each with an active run of ``workflow`` (version 1, digest ``$2``) in
    ``state``; the statement goes on from ``runs``."""
    return f"""
WITH subjects AS (
    INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
    SELECT gen_random_uuid(), 'item', 'S-' || g, '{{}}'::jsonb, 1, now(), now()
    FROM generate_series(1, $1) g
    RETURNING id
), runs AS (
    INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state, status,
                     visit, started_at, state_entered_at, updated_at, version)
    SELECT gen_random_uuid(), '{workflow}', 1, $2, id, '{state}', 'active', 1,
           now(), now(), now(), 1
    FROM subjects
    RETURNING id
)
"""
