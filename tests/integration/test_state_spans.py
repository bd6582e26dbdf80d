"""The timeline's trigger keeps the same effective visits as core/history/visits.py: entries,
a cancellation, an undo and a redo written by the store's timeline writer."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from taskflow.core.history import visits
from taskflow.core.runs.model import AuditEntry
from taskflow.service.access import principals
from taskflow.service.common.container import Services
from taskflow.store.history import spans
from taskflow.store.runs import timeline
from tests.api import workflows as w
from tests.conftest import T0, example_people, tokens_for

pytestmark = pytest.mark.anyio

SPANS = """SELECT state, entered_at, left_at, undone_by FROM state_span WHERE run = $1
           AND undone_by IS NULL ORDER BY line"""


def entered(at_min: int, state: str, via: str = "route", **more: Any) -> AuditEntry:
    details = {"state": state, "via": via, **more}
    return AuditEntry("state.entered", T0 + timedelta(minutes=at_min), "ada", None, None, details)


async def _rows(services: Services, run_id: str) -> list[tuple[Any, ...]]:
    async with services.db.connection() as conn:
        return [tuple(r) for r in await conn.fetch(SPANS, run_id)]


async def _core(services: Services, run_id: str) -> list[tuple[Any, ...]]:
    async with services.db.connection() as conn:
        lines = await spans.run_lines(conn, run_id)
    return [
        (v.state, v.entered_at, v.left_at, None)
        for v in visits.standing(visits.visits(lines, effective=True))
    ]


async def _last_entry(services: Services, run_id: str) -> int:
    async with services.db.connection() as conn:
        found: int = await conn.fetchval(
            "SELECT max(id) FROM audit_event WHERE run = $1 AND kind = 'state.entered'", run_id
        )
        return found


def _open_as_none(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [(s, e, None if left.year > 9000 else left, u) for s, e, left, u in rows]


async def test_spans_follow_entries_undo_redo_and_cancel(client: Any, services: Services) -> None:
    await principals.load(services, example_people())
    await w.start_expense(client, tokens_for(services)["app"], "EXP-S-1")
    async with services.db.connection() as conn:
        local = await conn.fetchval("SELECT id::text FROM run")  # the one run, its own id
        await timeline.append_audit(conn, local, [entered(10, "legal_review")])
    assert _open_as_none(await _rows(services, local)) == await _core(services, local)
    assert [r[0] for r in await _rows(services, local)] == ["submitted", "legal_review"]

    rewound = await _last_entry(services, local)
    async with services.db.connection() as conn:
        await timeline.append_audit(
            conn, local, [entered(20, "submitted", "undo", reverses=rewound)]
        )
    assert _open_as_none(await _rows(services, local)) == await _core(services, local)
    rows = _open_as_none(await _rows(services, local))
    assert [(r[0], r[2]) for r in rows] == [("submitted", None)]

    undo = await _last_entry(services, local)
    async with services.db.connection() as conn:
        await timeline.append_audit(
            conn, local, [entered(30, "legal_review", "undo", reverses=undo)]
        )
    rows = _open_as_none(await _rows(services, local))
    assert rows == await _core(services, local)
    assert [(r[0], r[1]) for r in rows] == [
        ("submitted", T0),
        ("legal_review", T0 + timedelta(minutes=10)),
    ]

    cancel = AuditEntry("run.cancelled", T0 + timedelta(minutes=40), "max", None, "dup", {})
    async with services.db.connection() as conn:
        await timeline.append_audit(conn, local, [cancel])
    rows = _open_as_none(await _rows(services, local))
    assert rows == await _core(services, local)
    assert rows[-1][2] == T0 + timedelta(minutes=40)
