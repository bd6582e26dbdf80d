"""Published automations as a load beside a bench's work (``--automations N``, issue 36).

Each listens to ``run.state_entered`` of the bench's workflow and its condition never
holds: evaluated on every line entering a state, none ever acts. The condition is
``subject.reference == "nobody"`` (``eq``: the worker's screen files it under its literal,
core/automations/screen.py) or ``subject.reference > "~"`` (``gt``: asked on every line).
:func:`progress` says how far the worker's automation lane got: the (automation, line)
decisions made of those due (lines written since publication, times the automations).
"""

from __future__ import annotations

import argparse
import asyncio
import time

import asyncpg

PUBLISH = """
INSERT INTO automation (workflow, name, status, version, document, author, published_at)
SELECT $1, 'bench ' || n, 'published', 1, jsonb_build_object(
         'name', 'bench ' || n, 'trigger', jsonb_build_object('on', 'run.state_entered'),
         'conditions', jsonb_build_array(jsonb_build_object(
             'op', $3::text, 'args', jsonb_build_array(
                 jsonb_build_object('ref', 'subject.reference'),
                 jsonb_build_object('lit', $4::text)))),
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


#: ``--automation-condition``: (operator, literal) of each automation's one condition.
CONDITIONS = {"eq": ("==", "nobody"), "gt": (">", "~")}


async def publish(url: str, workflow: str, count: int, condition: str = "eq") -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(PUBLISH, workflow, count, *CONDITIONS[condition])
    finally:
        await conn.close()


async def _counts(conn: asyncpg.Connection) -> tuple[int, int]:
    row = await conn.fetchrow(PROGRESS)
    assert row is not None
    return int(row["due"]), int(row["queued"])


async def progress(url: str, count: int, drain: float = 60.0) -> str:
    """``made of due`` (automation, line) decisions now, then how long the lane took to
    make the rest (up to ``drain`` seconds), for printing beside a bench's figures."""
    conn = await asyncpg.connect(url)
    try:
        due, queued = await _counts(conn)
        made = f"{(due - queued) * count} of {due * count} automation decisions made"
        start = time.monotonic()
        while queued and time.monotonic() - start < drain:
            await asyncio.sleep(0.1)
            due, queued = await _counts(conn)
        waited = time.monotonic() - start
    finally:
        await conn.close()
    if queued:
        return f"{made}; {queued * count} still due {drain:g} s later"
    return f"{made}; all {due * count} made {waited:.1f} s later"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--automations N`` and ``--automation-condition eq|gt`` of a bench."""
    parser.add_argument(
        "--automations",
        type=int,
        default=0,
        help="Also run with this many published automations of the workflow (issue 36).",
    )
    parser.add_argument(
        "--automation-condition",
        choices=sorted(CONDITIONS),
        default="eq",
        help="Their condition: == a literal (screened) or > one (asked on every line).",
    )
