"""A workspace's limits (docs/workspaces.md, "Limits"): live runs, open slots and requests per
minute, each refused with ``WorkspaceLimitReached`` naming the limit and the figure now,
nothing changed; two starts at the limit: exactly one wins."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from taskflow import clock, config
from taskflow.api.graphql.common import relay
from taskflow.service.common import container
from taskflow.service.compose import children
from taskflow.service.workspaces import workspaces
from taskflow.store.common import db
from taskflow.store.workspaces import scope as workspace_scope
from tests import conftest
from tests.api import workflows as w
from tests.api.test_workspaces_admin import acme_with_people
from tests.conftest import gql

pytestmark = pytest.mark.anyio


async def _rows(database_url: str, workspace: str) -> dict[str, int]:
    conn = await asyncpg.connect(database_url)
    try:
        return {
            t: int(await conn.fetchval(f"SELECT count(*) FROM {t} WHERE workspace = $1", workspace))
            for t in ("subject", "run", "slot", "audit_event")
        }
    finally:
        await conn.close()


async def test_a_start_over_the_run_limit_is_refused_and_writes_nothing(
    services: container.Services, database_url: str
) -> None:
    acme, _ = await acme_with_people(services, max_runs=1)
    app = services.staff_tokens.mint("acme-app", services.clock.now())
    async with conftest.asgi_client(services) as client:
        first = await w.start(client, app, "expense-approval", "expense", "E-1", w.EXPENSE)
        assert first["__typename"] == "StartRunSuccess"
        before = await _rows(database_url, acme)
        refused = await w.start(client, app, "expense-approval", "expense", "E-2", w.EXPENSE)
        assert refused["__typename"] == "WorkspaceLimitReached", refused
        assert (refused["code"], refused["limit"], refused["allowed"], refused["current"]) == (
            "WORKSPACE_LIMIT_REACHED", "runs", 1, 1,
        )  # fmt: skip
        assert await _rows(database_url, acme) == before
        # The limit raised: the same start goes through.
        await workspaces.set_limits(services, acme, (2, None, None))
        again = await w.start(client, app, "expense-approval", "expense", "E-2", w.EXPENSE)
        assert again["__typename"] == "StartRunSuccess"


async def test_two_starts_at_the_run_limit_one_wins(services: container.Services) -> None:
    acme, _ = await acme_with_people(services, max_runs=2)
    app = services.staff_tokens.mint("acme-app", services.clock.now())
    async with conftest.asgi_client(services) as client:
        await w.start(client, app, "expense-approval", "expense", "E-0", w.EXPENSE)
        for round_ in range(3):
            answers = await asyncio.gather(
                *(
                    w.start(
                        client, app, "expense-approval", "expense", f"E-{round_}-{n}", w.EXPENSE
                    )
                    for n in range(2)
                )
            )
            kinds = sorted(a["__typename"] for a in answers)
            if round_ == 0:
                assert kinds == ["StartRunSuccess", "WorkspaceLimitReached"], answers
            else:  # at the limit already: both refused
                assert kinds == ["WorkspaceLimitReached"] * 2, answers
    live = [w_ for w_ in await workspaces.every(services) if w_.id == acme]
    assert live[0].max_runs == 2


async def test_a_start_that_would_open_slots_over_the_limit_is_refused(
    services: container.Services, database_url: str
) -> None:
    acme, _ = await acme_with_people(services, max_open_slots=0)
    app = services.staff_tokens.mint("acme-app", services.clock.now())
    async with conftest.asgi_client(services) as client:
        before = await _rows(database_url, acme)
        refused = await w.start(client, app, "expense-approval", "expense", "E-1", w.EXPENSE)
        facts = [refused[k] for k in ("__typename", "limit", "allowed", "current")]
        assert facts == ["WorkspaceLimitReached", "open_slots", 0, 0]
        assert await _rows(database_url, acme) == before


ME = "{ me { login } }"


async def test_requests_over_the_workspaces_rate_are_refused_until_the_next_minute(
    services: container.Services, frozen_clock: clock.FrozenClock, people: dict[str, str]
) -> None:
    await acme_with_people(services, requests_per_minute=3)
    frozen_clock.set(frozen_clock.now().replace(second=5))
    fiona = services.staff_tokens.mint("acme-fiona", services.clock.now())
    async with conftest.asgi_client(services) as client:
        for _ in range(3):
            assert (await gql(client, ME, token=fiona)).ok()["me"]["login"] == "acme-fiona"
        refused = await gql(client, ME, token=fiona)
        error: dict[str, Any] = refused.errors[0]
        assert error["extensions"]["code"] == "WORKSPACE_LIMIT_REACHED"
        assert error["extensions"]["facts"] == {
            "limit": "requests_per_minute", "allowed": 3, "current": 3,
        }  # fmt: skip
        # Another workspace's people are not counted against acme's limit.
        assert (await gql(client, ME, token=people["fiona"])).ok()["me"]["login"] == "fiona"
        frozen_clock.advance(timedelta(minutes=1))
        assert (await gql(client, ME, token=fiona)).ok()["me"]["login"] == "acme-fiona"


async def test_a_completion_that_opens_slots_over_the_limit_is_refused(
    services: container.Services, database_url: str
) -> None:
    """The open-slot limit set while a slot is open (a caller's next request reads it): the
    completion that would open the next slots is refused, the slot still open."""
    acme, _ = await acme_with_people(services)
    app = services.staff_tokens.mint("acme-app", services.clock.now())
    tess = services.staff_tokens.mint("acme-tess", services.clock.now())
    async with conftest.asgi_client(services) as client:
        await w.start(client, app, "support-ticket", "ticket", "T-1", w.TICKET)
        triage = await w.slot_named(client, tess, "triage")
        await workspaces.set_limits(services, acme, (None, 1, None))
        before = await _rows(database_url, acme)
        claimed = await w.claim(client, tess, triage["id"])
        assert claimed["__typename"] == "SlotSuccess", claimed
        claimed_rows = await _rows(database_url, acme)
        done = await w.complete(
            client, tess, triage["id"], {"priority": "P2", "category": "billing"}
        )
        assert done["__typename"] == "WorkspaceLimitReached", done
        after = await _rows(database_url, acme)
        # Nothing changed but the refusal's own line on the run's timeline.
        assert {**after, "audit_event": 0} == {**claimed_rows, "audit_event": 0}
        assert after["audit_event"] - claimed_rows["audit_event"] <= 1
        assert claimed_rows["slot"] == before["slot"]
        slot = await w.slot_named(client, tess, "triage")
        assert slot["status"] == "CLAIMED"


@pytest.mark.parametrize(("max_runs", "started_kids"), [(1, 0), (2, 1)])
async def test_a_child_over_the_run_limit_is_refused_and_its_parent_reads_it(
    database_url: str,
    settings: config.Settings,
    frozen_clock: clock.FrozenClock,
    max_runs: int,
    started_kids: int,
) -> None:
    """The worker's child start (every workspace) meets the child's workspace's run limit:
    the parent alone fills it, so its children are refused (``child.refused`` on the parent's
    timeline, naming the limit) and no child run exists; with room for one more, the
    parent's children started together stop at the limit: the first starts, the next is
    refused, as one by one."""
    compose = str(Path(__file__).parent / "compose_workflows.py")
    with_compose = dataclasses.replace(settings, workflows=(*settings.workflows, compose))
    database = await db.Database.connect(database_url)
    try:
        services = container.build(database, with_compose, frozen_clock)
        acme, _ = await acme_with_people(services, max_runs=max_runs)
        app = services.staff_tokens.mint("acme-app", services.clock.now())
        async with conftest.asgi_client(services) as client:
            started = await w.start(client, app, "compose-parent", "doc", "D-1", {"title": "D"})
            assert started["__typename"] == "StartRunSuccess", started
        with workspace_scope.every():  # as the worker process
            await children.run_due(services)
        async with services.db.connection() as conn:
            refused = await conn.fetch(
                "SELECT reason FROM audit_event WHERE run = $1 AND kind = 'child.refused'",
                relay.from_global_id(started["run"]["id"], "id")[1],
            )
            kids = await conn.fetchval(
                "SELECT count(*) FROM run WHERE workspace = $1 AND workflow <> 'compose-parent'",
                acme,
            )
    finally:
        await database.close()
    assert refused
    assert all(f"limit of {max_runs} runs" in r["reason"] for r in refused), refused
    assert kids == started_kids
