"""Published automations as a load beside a bench's work (``--automations N``, issue 36).

Each listens to ``run.state_entered`` of the bench's workflow and its condition never
holds: evaluated on every line entering a state, none ever acts. :func:`progress` says
how far the worker's automation lane got: the (automation, line) decisions made of those
due (lines written since publication, times the automations).
"""

from __future__ import annotations

import asyncpg

PUBLISH = """
INSERT INTO automation (workflow, name, status, version, document, author, published_at)
SELECT $1, 'bench ' || n, 'published', 1, jsonb_build_object(
         'name', 'bench ' || n, 'trigger', jsonb_build_object('on', 'run.state_entered'),
         'conditions', jsonb_build_array(jsonb_build_object('op', '==', 'args', jsonb_build_array(
             jsonb_build_object('ref', 'subject.reference'), jsonb_build_object('lit', 'nobody')))),
         'actions', jsonb_build_array(jsonb_build_object('do', 'comment', 'text', 'x'))),
       'ada', now()
FROM generate_series(1, $2) n
"""

#: Lines the automations listen to since they were published, and those still queued.
PROGRESS = """
SELECT count(*) AS due, count(q.line) AS queued
  FROM audit_event e LEFT JOIN automation_line q ON q.line = e.id
 WHERE e.kind = 'state.entered' AND e.at >= (SELECT min(published_at) FROM automation)
"""


async def publish(url: str, workflow: str, count: int) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(PUBLISH, workflow, count)
    finally:
        await conn.close()


async def progress(url: str, count: int) -> str:
    """``made of due`` (automation, line) decisions, for printing beside a bench's figures."""
    conn = await asyncpg.connect(url)
    try:
        row = await conn.fetchrow(PROGRESS)
    finally:
        await conn.close()
    assert row is not None
    due, queued = int(row["due"]), int(row["queued"])
    return f"{(due - queued) * count} of {due * count} automation decisions made"
