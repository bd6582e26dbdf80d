"""Automations in PostgreSQL: drafts, publishing versions, and one decision per event."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from taskflow.service.common.container import Services
from taskflow.store.automations import automations

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)
DOC = {"name": "n", "trigger": {"on": "run.ended"}, "actions": [{"do": "comment", "text": "x"}]}


async def test_a_draft_is_published_in_versions_and_decides_each_event_once(
    services: Services,
) -> None:
    async with services.db.connection() as conn:
        new = await automations.insert(
            conn, workflow="support-ticket", name="n", document=DOC, author="lead", now=T0
        )
        row = await automations.get(conn, new)
        assert row is not None
        assert (row.status, row.version, row.document) == ("draft", 0, DOC)
        v1 = await automations.set_status(conn, new, "published", publish=True, now=T0)
        paused = await automations.set_status(conn, new, "paused", publish=False, now=T0)
        v2 = await automations.set_status(conn, new, "published", publish=True, now=T0)
        assert (v1, paused, v2) == (1, 1, 2)
        assert [r.id for r in await automations.of_workflow(conn, "support-ticket")] == [new]
        later = T0 + timedelta(seconds=1)
        assert await automations.act_once(conn, new, 2, "event:e1", "act", later)
        assert not await automations.act_once(conn, new, 2, "event:e1", "act", later)
        assert await automations.act_once(conn, new, 2, "event:e2", "skip", later)
        assert await automations.get(conn, "not-a-uuid") is None
